-- POST /api/v1/tasks/{id}/dependencies
-- A dependency added: the cycle check, then the link.
-- After the key look-up (sql/every-request.sql).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- Write transaction (PrismaService.write), round trip 1:
-- 1.
SELECT
  pg_advisory_xact_lock(hashtextextended ($1, 0))::text AS locked;
-- 2.
SELECT
  t.id::text
FROM
  tasks t
WHERE
  t.project_id = $1::uuid
  AND t.id = $2::uuid
  AND t.deleted_at IS NULL
ORDER BY
  t.id
FOR NO KEY UPDATE;
-- 3.
SELECT
  t.id::text
FROM
  tasks t
WHERE
  t.project_id = $1::uuid
  AND t.id = $2::uuid
  AND t.deleted_at IS NULL
ORDER BY
  t.id
FOR SHARE;
-- 4.
SELECT
  EXISTS (
    SELECT
      1
    FROM
      task_dependencies
    WHERE
      task_id = $1::uuid
      AND blocked_by_id = $2::uuid
  ) AS exists;
-- 5.
WITH RECURSIVE
  waits_for (id) AS (
    SELECT
      blocked_by_id
    FROM
      task_dependencies
    WHERE
      task_id = $1::uuid
    UNION
    SELECT
      d.blocked_by_id
    FROM
      task_dependencies d
      JOIN waits_for w ON d.task_id = w.id
  )
SELECT
  EXISTS (
    SELECT
      1
    FROM
      waits_for
    WHERE
      id = $2::uuid
  ) AS cycle;

-- Round trip 2, then COMMIT:
-- 6.
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
-- 7.
WITH
  link AS (
    INSERT INTO
      task_dependencies (project_id, task_id, blocked_by_id, created_at)
    VALUES
      ($1::uuid, $2::uuid, $3::uuid, current_setting('planning.change_at')::timestamptz)
  )
UPDATE tasks
SET
  updated_at = current_setting('planning.change_at')::timestamptz
WHERE
  id = $4::uuid;
-- 8.
WITH
  ledger_tracked AS (
    -- The project's active sprint, or the one this change closes (its open tasks leave with the close).
    SELECT
      s.id,
      s.id = ANY ($1::uuid[]) AS closing
    FROM
      sprints s
    WHERE
      s.project_id = $2::uuid
      AND (
        s.status = 'active'
        OR s.id = ANY ($3::uuid[])
      )
      AND NOT s.id = ANY ($4::uuid[])
  ),
  ledger_state AS (
    SELECT
      tr.id AS sprint_id,
      x.id AS task_id,
      COALESCE(
        t.deleted_at IS NULL
        AND t.sprint_id = tr.id,
        false
      ) AS in_scope,
      tr.closing
      AND NOT COALESCE(
        t.deleted_at IS NULL
        AND t.sprint_id = tr.id,
        false
      ) AS carried_over,
      -- A task destroyed by the change keeps its last known state.
      CASE
        WHEN t.id IS NULL THEN was.estimate
        ELSE t.estimate
      END AS estimate,
      COALESCE(t.status, was.status) AS status,
      COALESCE(t.title, was.title) AS title,
      was.in_scope AS was_in,
      was.estimate AS was_estimate,
      was.status AS was_status
    FROM
      ledger_tracked tr
      CROSS JOIN unnest($5::uuid[]) AS x (id)
      LEFT JOIN tasks t ON t.id = x.id
      AND t.project_id = $6::uuid
      LEFT JOIN sprint_scope was ON was.sprint_id = tr.id
      AND was.task_id = x.id
  ),
  ledger_moved AS (
    SELECT
      *
    FROM
      ledger_state s
    WHERE
      (
        s.in_scope
        OR COALESCE(s.was_in, false)
      )
      AND (
        s.was_in IS NULL
        OR s.in_scope <> s.was_in
        OR s.estimate IS DISTINCT FROM s.was_estimate
        OR s.status IS DISTINCT FROM s.was_status
      )
  ),
  ledger_timeline AS (
    INSERT INTO
      sprint_ledger (project_id, sprint_id, task_id, kind, in_scope, carried_over, estimate, status, title, at)
    SELECT
      $7::uuid,
      m.sprint_id,
      m.task_id,
      'changed',
      m.in_scope,
      m.carried_over,
      m.estimate,
      m.status,
      m.title,
      current_setting('planning.change_at')::timestamptz
    FROM
      ledger_moved m
  ),
  ledger_scope AS (
    INSERT INTO
      sprint_scope AS c (
        sprint_id,
        task_id,
        project_id,
        entered,
        entered_estimate,
        in_scope,
        carried_over,
        estimate,
        status,
        title
      )
    SELECT
      m.sprint_id,
      m.task_id,
      $8::uuid,
      m.in_scope,
      CASE
        WHEN m.in_scope THEN m.estimate
      END,
      m.in_scope,
      m.carried_over,
      m.estimate,
      m.status,
      m.title
    FROM
      ledger_moved m
    ON CONFLICT (sprint_id, task_id) DO UPDATE
    SET
      entered = c.entered
      OR (
        EXCLUDED.in_scope
        AND NOT c.in_scope
      ),
      entered_estimate = CASE
        WHEN EXCLUDED.in_scope
        AND NOT c.in_scope THEN EXCLUDED.estimate
        ELSE c.entered_estimate
      END,
      left_estimate = CASE
        WHEN c.in_scope
        AND NOT EXCLUDED.in_scope
        AND NOT EXCLUDED.carried_over THEN EXCLUDED.estimate
        ELSE c.left_estimate
      END,
      reestimated = c.reestimated + CASE
        WHEN c.in_scope
        AND EXCLUDED.in_scope THEN COALESCE(EXCLUDED.estimate, 0) - COALESCE(c.estimate, 0)
        ELSE 0
      END,
      in_scope = EXCLUDED.in_scope,
      carried_over = EXCLUDED.carried_over,
      estimate = EXCLUDED.estimate,
      status = EXCLUDED.status,
      title = EXCLUDED.title
  ),
  numbered AS (
    -- The numbers the claim took: this transaction's own update of the row.
    SELECT
      last_sequence - $9 AS before
    FROM
      event_sequences
    WHERE
      project_id = $10::uuid
  ),
  input AS (
    SELECT
      *
    FROM
      json_to_recordset($11::json) AS r (ord int, kind text, id uuid, action text, changes json, blocked_by_id uuid)
  ),
  history AS (
    INSERT INTO
      history_entries (project_id, task_id, actor, action, changes, created_at)
    SELECT
      $12::uuid,
      i.id,
      $13,
      i.action,
      COALESCE(i.changes, '[]'::json),
      current_setting('planning.change_at')::timestamptz
    FROM
      input i
    WHERE
      i.kind = 'task'
      AND i.action <> 'purged'
  ),
  shown AS (
    SELECT
      t.*
    FROM
      tasks t
    WHERE
      t.id = ANY ($14::uuid[])
      AND t.project_id = $15::uuid
  ),
  shown_labels AS MATERIALIZED (
    SELECT
      tl.task_id,
      json_agg(
        json_build_object('id', l.id, 'name', l.name, 'color', l.color)
        ORDER BY
          l.name,
          l.id
      ) AS labels
    FROM
      shown
      JOIN task_labels tl ON tl.task_id = shown.id
      JOIN labels l ON l.id = tl.label_id
    GROUP BY
      tl.task_id
  ),
  shown_blocked AS MATERIALIZED (
    SELECT DISTINCT
      d.task_id
    FROM
      shown
      JOIN task_dependencies d ON d.task_id = shown.id
      JOIN tasks blocker ON blocker.id = d.blocked_by_id
    WHERE
      blocker.deleted_at IS NULL
      AND blocker.status NOT IN ('done', 'cancelled')
  ),
  views AS (
    SELECT
      'task' AS kind,
      t.id,
      CASE
        WHEN t.deleted_at IS NULL THEN json_build_object(
          'id',
          t.id,
          'projectId',
          t.project_id,
          'title',
          t.title,
          'description',
          t.description,
          'status',
          t.status::text,
          'priority',
          t.priority::text,
          'parentId',
          t.parent_id::text,
          'dueDate',
          to_char(t.due_date, 'YYYY-MM-DD'),
          'completedAt',
          to_char(t.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'createdAt',
          to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'updatedAt',
          to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'estimate',
          t.estimate::float8,
          'rank',
          t.rank,
          'assignee',
          CASE
            WHEN a.id IS NULL THEN NULL
            ELSE json_build_object('membershipId', a.id, 'name', a.name)
          END,
          'labels',
          COALESCE(task_labels.labels, '[]'::json),
          'sprint',
          CASE
            WHEN s.id IS NULL THEN NULL
            ELSE json_build_object('id', s.id, 'name', s.name, 'status', s.status)
          END,
          'blocked',
          blocked.task_id IS NOT NULL,
          'dependencies',
          json_build_object(
            'blockedBy',
            COALESCE(
              (
                SELECT
                  json_agg(
                    json_build_object('id', other.id, 'title', other.title, 'status', other.status)
                    ORDER BY
                      d.created_at,
                      other.id
                  )
                FROM
                  task_dependencies d
                  JOIN tasks other ON other.id = d.blocked_by_id
                WHERE
                  d.task_id = t.id
                  AND other.deleted_at IS NULL
              ),
              '[]'::json
            ),
            'blocks',
            COALESCE(
              (
                SELECT
                  json_agg(
                    json_build_object('id', other.id, 'title', other.title, 'status', other.status)
                    ORDER BY
                      d.created_at,
                      other.id
                  )
                FROM
                  task_dependencies d
                  JOIN tasks other ON other.id = d.task_id
                WHERE
                  d.blocked_by_id = t.id
                  AND other.deleted_at IS NULL
              ),
              '[]'::json
            )
          )
        )
        ELSE json_build_object(
          'id',
          t.id,
          'projectId',
          t.project_id,
          'title',
          t.title,
          'status',
          t.status::text,
          'priority',
          t.priority::text,
          'parentId',
          t.parent_id::text,
          'dueDate',
          to_char(t.due_date, 'YYYY-MM-DD'),
          'completedAt',
          to_char(t.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'createdAt',
          to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'updatedAt',
          to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'deletedAt',
          to_char(t.deleted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'estimate',
          t.estimate::float8,
          'rank',
          t.rank,
          'assignee',
          CASE
            WHEN a.id IS NULL THEN NULL
            ELSE json_build_object('membershipId', a.id, 'name', a.name)
          END,
          'labels',
          COALESCE(task_labels.labels, '[]'::json),
          'sprint',
          CASE
            WHEN s.id IS NULL THEN NULL
            ELSE json_build_object('id', s.id, 'name', s.name, 'status', s.status)
          END,
          'blocked',
          blocked.task_id IS NOT NULL
        )
      END AS view
    FROM
      shown t
      LEFT JOIN memberships a ON a.id = t.assignee_id
      LEFT JOIN sprints s ON s.id = t.sprint_id
      LEFT JOIN shown_labels task_labels ON task_labels.task_id = t.id
      LEFT JOIN shown_blocked blocked ON blocked.task_id = t.id
  ),
  events AS (
    INSERT INTO
      events (project_id, sequence, type, actor, occurred_at, data)
    SELECT
      $16::uuid,
      n.before + i.ord,
      i.kind || '.' || i.action,
      $17,
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
      $18::uuid,
      w.id,
      e.id,
      current_setting('planning.change_at')::timestamptz,
      current_setting('planning.change_at')::timestamptz
    FROM
      events e
      JOIN webhooks w ON w.project_id = $19::uuid
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
    $20,
    $21::text || CASE
      WHEN EXISTS (
        SELECT
        FROM
          deliveries
      ) THEN $22::text
      ELSE ''
    END
  )::text AS notified,
  answer.*
FROM
  (
    SELECT
      COALESCE(
        json_object_agg(v.id, v.view) FILTER (
          WHERE
            v.kind = 'task'
        ),
        '{}'::json
      ) AS tasks,
      '{}'::json AS sprints,
      '{}'::json AS labels,
      '{}'::json AS members,
      '{}'::json AS comments,
      '{}'::json AS attachments
    FROM
      views v
  ) answer;
