-- PATCH /api/v1/tasks/{id}/comments/{id}
-- A comment’s new text: its next revision, its mentions replaced.
-- After the key look-up (sql/every-request.sql).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- Write transaction (PrismaService.write), round trip 1:
-- 1.
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
-- 2.
SELECT
  c.id::text,
  c.parent_id::text AS "parentId",
  c.body,
  c.author_key_id::text AS "authorKeyId",
  c.revision
FROM
  comments c
WHERE
  c.task_id = $1::uuid
  AND c.project_id = $2::uuid
  AND c.id = $3::uuid
  AND c.deleted_at IS NULL
ORDER BY
  c.id
FOR NO KEY UPDATE;
-- 3.
SELECT
  m.id::text AS id
FROM
  memberships m
WHERE
  m.id = ANY ($1::uuid[])
  AND m.project_id = $2::uuid;

-- Round trip 2, then COMMIT:
-- 4.
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
-- 5.
WITH
  edited AS (
    UPDATE comments
    SET
      body = $1,
      revision = $2,
      edited_at = current_setting('planning.change_at')::timestamptz,
      updated_at = current_setting('planning.change_at')::timestamptz
    WHERE
      id = $3::uuid
      AND project_id = $4::uuid
    RETURNING
      id,
      body
  )
INSERT INTO
  comment_revisions (comment_id, number, body, author_key_id, author_name, created_at)
SELECT
  id,
  $5,
  body,
  $6::uuid,
  $7,
  current_setting('planning.change_at')::timestamptz
FROM
  edited;
-- 6.
DELETE FROM comment_mentions
WHERE
  comment_id = $1::uuid;
-- 7.
INSERT INTO
  comment_mentions (comment_id, position, project_id, membership_id)
SELECT
  $1::uuid,
  m.position,
  $2::uuid,
  m.id
FROM
  unnest($3::uuid[]) WITH ORDINALITY AS m (id, position);
-- 8.
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
      'comment' AS kind,
      c.id,
      json_build_object(
        'id',
        c.id,
        'taskId',
        c.task_id,
        'parentId',
        c.parent_id::text,
        'body',
        c.body,
        'createdAt',
        to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'updatedAt',
        to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'editedAt',
        to_char(c.edited_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'mentions',
        COALESCE(
          (
            SELECT
              json_agg(
                json_build_object('membershipId', m.id, 'name', m.name)
                ORDER BY
                  cm.position
              )
            FROM
              comment_mentions cm
              JOIN memberships m ON m.id = cm.membership_id
            WHERE
              cm.comment_id = c.id
          ),
          '[]'::json
        ),
        'author',
        json_build_object('keyId', c.author_key_id, 'name', c.author_name),
        'deleted',
        c.deleted_at IS NOT NULL
      ) AS view
    FROM
      comments c
    WHERE
      c.id = ANY ($4::uuid[])
      AND c.project_id = $5::uuid
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
      '{}'::json AS sprints,
      '{}'::json AS labels,
      '{}'::json AS members,
      COALESCE(
        json_object_agg(v.id, v.view) FILTER (
          WHERE
            v.kind = 'comment'
        ),
        '{}'::json
      ) AS comments,
      '{}'::json AS attachments
    FROM
      views v
  ) answer;
