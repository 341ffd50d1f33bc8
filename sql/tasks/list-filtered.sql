-- GET /api/v1/tasks?status=backlog,in_progress&assigneeId={id}&labelId={id}
-- A filtered list: by status, assignee and label.
-- After the key look-up (sql/every-request.sql).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- A prepared statement (PrismaService.preparedSql):
-- 1.
SELECT
  COALESCE(
    (
      SELECT
        v.version
      FROM
        task_list_versions v
      WHERE
        v.project_id = $1::uuid
    ),
    0
  )::text AS version;

-- A statement (PrismaService.sql):
-- 2.
WITH
  shown AS MATERIALIZED (
    SELECT
      t.*,
      json_build_array(to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), t.id)::text AS cursor_at,
      row_number() OVER (
        ORDER BY
          t.created_at DESC,
          t.id DESC
      ) AS position
    FROM
      (
        SELECT
          t.*
        FROM
          tasks t
        WHERE
          t.project_id = $1::uuid
          AND t.deleted_at IS NULL
          AND t.status IN ($2::task_status, $3::task_status)
          AND t.assignee_id = $4::uuid
          AND EXISTS (
            SELECT
              1
            FROM
              task_labels tl
            WHERE
              tl.task_id = t.id
              AND tl.label_id = $5::uuid
          )
        ORDER BY
          t.created_at DESC,
          t.id DESC
        LIMIT
          $6
      ) t
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
  version AS (
    SELECT
      COALESCE(v.version, 0) AS version,
      COALESCE(v.deltas_from, 0) AS deltas_from,
      COALESCE(v.version, 0)::text AS key
    FROM
      (
        SELECT
          1
      ) one
      LEFT JOIN task_list_versions v ON v.project_id = $7::uuid
  )
SELECT
  version.key AS version,
  CASE
    WHEN version.key = $8 THEN $9::int
    WHEN false THEN $10::int + (
      SELECT
        COALESCE(
          sum(
            (
              SELECT
                count(*)
              FROM
                jsonb_populate_record(NULL::tasks, d.new_row) t
              WHERE
                t.project_id = $11::uuid
            ) - (
              SELECT
                count(*)
              FROM
                jsonb_populate_record(NULL::tasks, d.old_row) t
              WHERE
                t.project_id = $12::uuid
            )
          ),
          0
        )::int
      FROM
        task_list_deltas d
      WHERE
        d.project_id = $13::uuid
        AND d.version > $14::bigint
    )
    ELSE (
      SELECT
        count(*)::int
      FROM
        tasks t
      WHERE
        t.project_id = $15::uuid
        AND t.deleted_at IS NULL
        AND t.status IN ($16::task_status, $17::task_status)
        AND t.assignee_id = $18::uuid
        AND EXISTS (
          SELECT
            1
          FROM
            task_labels tl
          WHERE
            tl.task_id = t.id
            AND tl.label_id = $19::uuid
        )
    )
  END AS total,
  (
    SELECT
      COALESCE(
        json_agg(
          json_build_object(
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
          ORDER BY
            t.position
        ),
        '[]'::json
      )::text
    FROM
      shown t
      LEFT JOIN memberships a ON a.id = t.assignee_id
      LEFT JOIN sprints s ON s.id = t.sprint_id
      LEFT JOIN shown_labels task_labels ON task_labels.task_id = t.id
      LEFT JOIN shown_blocked blocked ON blocked.task_id = t.id
    WHERE
      t.position <= $20
  ) AS tasks,
  next.cursor_at AS next,
  false AS overflowed
FROM
  version
  LEFT JOIN (
    SELECT
      t.cursor_at
    FROM
      shown t
    WHERE
      t.position = $21
      AND EXISTS (
        SELECT
          1
        FROM
          shown
        WHERE
          shown.position > $22
      )
  ) next ON true;
