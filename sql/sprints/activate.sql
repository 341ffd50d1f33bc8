-- POST /admin/v1/sprints/{id}/activate
-- The app activates a planned sprint (admin interface): ChangeLog.record with the ledger’s scope committed.
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- Write transaction (PrismaService.write), round trip 1:
-- 1.
SELECT
  s.project_id::text AS "projectId",
  json_build_object(
    'id',
    s.id,
    'name',
    s.name,
    'goal',
    s.goal,
    'status',
    s.status::text,
    'startDate',
    to_char(s.start_date, 'YYYY-MM-DD'),
    'endDate',
    to_char(s.end_date, 'YYYY-MM-DD'),
    'createdAt',
    to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  ) AS view
FROM
  sprints s
WHERE
  s.id = $1::uuid
  AND (
    $2::uuid IS NULL
    OR s.project_id = $3::uuid
  )
ORDER BY
  s.id
FOR UPDATE;

-- Round trip 2:
-- 2.
SELECT
  id::text,
  name
FROM
  sprints
WHERE
  project_id = $1::uuid
  AND status = 'active';

-- Round trip 3, then COMMIT:
-- 3.
WITH
  claimed AS (
    INSERT INTO
      event_sequences AS s (project_id, last_sequence, last_change_at)
    VALUES
      ($1::uuid, $2, date_trunc('milliseconds', clock_timestamp()))
    ON CONFLICT (project_id) DO UPDATE
    SET
      last_sequence = s.last_sequence + $3,
      last_change_at = greatest(s.last_change_at + interval '1 millisecond', date_trunc('milliseconds', clock_timestamp()))
    RETURNING
      last_change_at
  )
SELECT
  set_config($4, last_change_at::text, true) AS at
FROM
  claimed;
-- 4.
UPDATE tasks
SET
  sprint_id = $1::uuid,
  updated_at = current_setting('planning.change_at')::timestamptz
WHERE
  id = ANY ($2::uuid[])
  AND sprint_id = $3::uuid;
-- 5.
UPDATE sprints
SET
  status = $1::sprint_status,
  updated_at = current_setting('planning.change_at')::timestamptz,
  activated_at = current_setting('planning.change_at')::timestamptz
WHERE
  id = $2::uuid;
-- 6.
WITH
  scope AS (
    SELECT
      t.sprint_id,
      t.id,
      t.estimate,
      t.status,
      t.title
    FROM
      tasks t
    WHERE
      t.project_id = $1::uuid
      AND t.sprint_id = ANY ($2::uuid[])
      AND t.deleted_at IS NULL
  ),
  timeline AS (
    INSERT INTO
      sprint_ledger (project_id, sprint_id, task_id, kind, in_scope, estimate, status, title, at)
    SELECT
      $3::uuid,
      t.sprint_id,
      t.id,
      'committed',
      true,
      t.estimate,
      t.status,
      t.title,
      current_setting('planning.change_at')::timestamptz
    FROM
      scope t
  )
INSERT INTO
  sprint_scope (sprint_id, task_id, project_id, committed, committed_estimate, in_scope, estimate, status, title)
SELECT
  t.sprint_id,
  t.id,
  $4::uuid,
  true,
  t.estimate,
  true,
  t.estimate,
  t.status,
  t.title
FROM
  scope t;
-- 7.
WITH
  numbered AS (
    -- The numbers the claim took: this transaction's own update of the row.
    SELECT
      last_sequence - $1 AS before
    FROM
      event_sequences
    WHERE
      project_id = $2::uuid
  ),
  input AS (
    SELECT
      *
    FROM
      json_to_recordset($3::json) AS r (ord int, kind text, id uuid, action text, changes json, blocked_by_id uuid)
  ),
  views AS (
    SELECT
      'sprint' AS kind,
      s.id,
      json_build_object(
        'id',
        s.id,
        'name',
        s.name,
        'goal',
        s.goal,
        'status',
        s.status::text,
        'startDate',
        to_char(s.start_date, 'YYYY-MM-DD'),
        'endDate',
        to_char(s.end_date, 'YYYY-MM-DD'),
        'createdAt',
        to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      ) AS view
    FROM
      sprints s
    WHERE
      s.id = ANY ($4::uuid[])
      AND s.project_id = $5::uuid
  ),
  events AS (
    INSERT INTO
      events (project_id, sequence, type, actor, occurred_at, data)
    SELECT
      $6::uuid,
      n.before + i.ord,
      i.kind || '.' || i.action,
      $7,
      current_setting('planning.change_at')::timestamptz,
      CASE
        WHEN i.action = 'updated' THEN json_build_object(i.kind, view, 'changes', i.changes)
        WHEN i.blocked_by_id IS NOT NULL THEN json_build_object(i.kind, view, 'blockedById', i.blocked_by_id)
        -- decisions.md section 19: what the sprint committed to, and at its close the frozen report.
        WHEN i.kind = 'sprint'
        AND i.action = 'activated' THEN json_build_object(
          i.kind,
          view,
          'report',
          json_build_object(
            'committed',
            (
              SELECT
                json_build_object(
                  'tasks',
                  count(*) FILTER (
                    WHERE
                      true
                  ),
                  'points',
                  COALESCE(
                    sum(c.committed_estimate) FILTER (
                      WHERE
                        true
                    ),
                    0
                  )::float8,
                  'unestimated',
                  count(*) FILTER (
                    WHERE
                      (true)
                      AND c.committed_estimate IS NULL
                  )
                )
              FROM
                sprint_scope c
              WHERE
                c.sprint_id = i.id
                AND c.committed
            )
          )
        )
        WHEN i.kind = 'sprint'
        AND i.action = 'closed' THEN json_build_object(
          i.kind,
          view,
          'report',
          (
            SELECT
              s.report
            FROM
              sprints s
            WHERE
              s.id = i.id
          )
        )
        ELSE json_build_object(i.kind, view)
      END
    FROM
      input i
      CROSS JOIN numbered n
      -- A task or sprint destroyed by the change is shown as its id alone.
      CROSS JOIN LATERAL (
        SELECT
          COALESCE(
            (
              SELECT
                v.view
              FROM
                views v
              WHERE
                v.kind = i.kind
                AND v.id = i.id
            ),
            json_build_object('id', i.id)
          ) AS view
      ) v
    RETURNING
      id,
      type
  ),
  deliveries AS (
    INSERT INTO
      webhook_deliveries (project_id, webhook_id, event_id, next_attempt_at, created_at)
    SELECT
      $8::uuid,
      w.id,
      e.id,
      current_setting('planning.change_at')::timestamptz,
      current_setting('planning.change_at')::timestamptz
    FROM
      events e
      JOIN webhooks w ON w.project_id = $9::uuid
      AND w.enabled
      AND (
        e.type = ANY (w.events)
        OR '*' = ANY (w.events)
      )
    RETURNING
      1
  )
  -- Only a change that queued deliveries wakes the webhook workers.
SELECT
  pg_notify (
    $10,
    $11::text || CASE
      WHEN EXISTS (
        SELECT
        FROM
          deliveries
      ) THEN $12::text
      ELSE ''
    END
  )::text AS notified,
  answer.*
FROM
  (
    SELECT
      '{}'::json AS tasks,
      COALESCE(
        json_object_agg(v.id, v.view) FILTER (
          WHERE
            v.kind = 'sprint'
        ),
        '{}'::json
      ) AS sprints,
      '{}'::json AS labels,
      '{}'::json AS members,
      '{}'::json AS comments,
      '{}'::json AS attachments
    FROM
      views v
  ) answer;
