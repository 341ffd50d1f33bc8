-- GET /api/v1/tasks/{id}
-- A task in full.
-- After the key look-up (sql/every-request.sql).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- A statement (PrismaService.sql):
-- 1.
WITH
  shown AS (
    SELECT
      t.*
    FROM
      tasks t
    WHERE
      t.id = $1::uuid
      AND t.project_id = $2::uuid
      AND t.deleted_at IS NULL
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
  )
SELECT
  json_build_object(
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
  ) AS task
FROM
  shown t
  LEFT JOIN memberships a ON a.id = t.assignee_id
  LEFT JOIN sprints s ON s.id = t.sprint_id
  LEFT JOIN shown_labels task_labels ON task_labels.task_id = t.id
  LEFT JOIN shown_blocked blocked ON blocked.task_id = t.id;
