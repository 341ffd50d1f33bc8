-- GET /api/v1/tasks/{id}/comments?limit=1
-- The first page of a task’s comments, oldest first, with the total and the next cursor.
-- After the key look-up (sql/every-request.sql).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- A statement (PrismaService.sql):
-- 1.
WITH
  task AS (
    SELECT
      t.id
    FROM
      tasks t
    WHERE
      t.id = $1::uuid
      AND t.project_id = $2::uuid
      AND t.deleted_at IS NULL
  ),
  page AS MATERIALIZED (
    SELECT
      c.*,
      row_number() OVER (
        ORDER BY
          c.created_at,
          c.id
      ) AS position
    FROM
      (
        SELECT
          c.*
        FROM
          comments c
        WHERE
          c.task_id = (
            SELECT
              id
            FROM
              task
          )
        ORDER BY
          c.created_at,
          c.id
        LIMIT
          $3
      ) c
  )
SELECT
  EXISTS (
    SELECT
    FROM
      task
  ) AS found,
  (
    SELECT
      count(*)::int
    FROM
      comments c
    WHERE
      c.task_id = (
        SELECT
          id
        FROM
          task
      )
  ) AS total,
  (
    SELECT
      COALESCE(
        json_agg(
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
          )
          ORDER BY
            c.position
        ),
        '[]'::json
      )::text
    FROM
      page c
    WHERE
      c.position <= $4
  ) AS comments,
  (
    SELECT
      json_build_array(to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), c.id)::text
    FROM
      page c
    WHERE
      c.position = $5
      AND EXISTS (
        SELECT
        FROM
          page
        WHERE
          page.position > $6
      )
  ) AS next;
