-- GET /api/v1/tasks?search=bulk&sort=relevance&limit=1
-- A searched list, best match first (sort=relevance): every match ranked.
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
  )::text || '.' || COALESCE(
    (
      SELECT
        e.last_sequence
      FROM
        event_sequences e
      WHERE
        e.project_id = $2::uuid
    ),
    0
  )::text AS version;

-- A statement (PrismaService.sql):
-- 2.
SELECT
  count(*)::int AS matches
FROM
  (
    SELECT
      s.task_id
    FROM
      task_search s
    WHERE
      s.project_id = $1::uuid
      AND (s.heading || s.comments) @@ task_search_query ($2)
    LIMIT
      $3
  ) h;

-- A statement (PrismaService.sql):
-- 3.
WITH
  search_hits AS MATERIALIZED (
    SELECT
      s.task_id
    FROM
      task_search s
    WHERE
      s.project_id = $1::uuid
      AND (s.heading || s.comments) @@ task_search_query ($2)
    LIMIT
      $3
  ),
  shown AS MATERIALIZED (
    SELECT
      t.*,
      json_build_array(
        t.search_rank::text,
        to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        t.id
      )::text AS cursor_at,
      row_number() OVER (
        ORDER BY
          t.search_rank DESC,
          t.created_at DESC,
          t.id DESC
      ) AS position
    FROM
      (
        SELECT
          t.*
        FROM
          search_hits h
          JOIN (
            SELECT
              t.*,
              COALESCE(
                (
                  SELECT
                    ts_rank((s.heading || s.comments), task_search_query ($4))
                  FROM
                    task_search s
                  WHERE
                    s.task_id = t.id
                ),
                0
              ) AS search_rank
            FROM
              tasks t
          ) t ON t.id = h.task_id
        WHERE
          t.project_id = $5::uuid
          AND t.deleted_at IS NULL
          AND EXISTS (
            SELECT
              1
            FROM
              task_search s
            WHERE
              s.task_id = t.id
              AND (s.heading || s.comments) @@ task_search_query ($6)
          )
        ORDER BY
          t.search_rank DESC,
          t.created_at DESC,
          t.id DESC
        LIMIT
          $7
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
      COALESCE(v.version, 0)::text || '.' || COALESCE(
        (
          SELECT
            e.last_sequence
          FROM
            event_sequences e
          WHERE
            e.project_id = $8::uuid
        ),
        0
      )::text AS key
    FROM
      (
        SELECT
          1
      ) one
      LEFT JOIN task_list_versions v ON v.project_id = $9::uuid
  )
SELECT
  version.key AS version,
  CASE
    WHEN version.key = $10 THEN $11::int
    WHEN $12::bigint >= version.deltas_from
    AND version.version - $13::bigint <= $14
    AND $15::bigint >= COALESCE(
      (
        SELECT
          q.pruned_through
        FROM
          event_sequences q
        WHERE
          q.project_id = $16::uuid
      ),
      0
    )
    AND NOT EXISTS (
      SELECT
        1
      FROM
        events e
      WHERE
        e.project_id = $17::uuid
        AND e.sequence > $18::bigint
        AND e.type IN ($19, $20, $21, $22)
    )
    AND NOT EXISTS (
      SELECT
        1
      FROM
        task_list_deltas d
      WHERE
        d.project_id = $23::uuid
        AND d.version > $24::bigint
        AND (
          d.new_row IS NULL
          OR (d.new_row ->> 'description_changed')::boolean IS NOT FALSE
        )
    ) THEN $25::int + (
      SELECT
        COALESCE(
          sum(
            (
              SELECT
                count(*)
              FROM
                jsonb_populate_record(NULL::tasks, d.new_row) t
              WHERE
                t.project_id = $26::uuid
                AND t.deleted_at IS NULL
                AND (
                  task_search_heading (
                    t.title,
                    (
                      SELECT
                        latest.description
                      FROM
                        tasks latest
                      WHERE
                        latest.id = t.id
                    )
                  ) || COALESCE(
                    (
                      SELECT
                        s.comments
                      FROM
                        task_search s
                      WHERE
                        s.task_id = t.id
                    ),
                    ''::tsvector
                  )
                ) @@ task_search_query ($27)
            ) - (
              SELECT
                count(*)
              FROM
                jsonb_populate_record(NULL::tasks, d.old_row) t
              WHERE
                t.project_id = $28::uuid
                AND t.deleted_at IS NULL
                AND (
                  task_search_heading (
                    t.title,
                    (
                      SELECT
                        latest.description
                      FROM
                        tasks latest
                      WHERE
                        latest.id = t.id
                    )
                  ) || COALESCE(
                    (
                      SELECT
                        s.comments
                      FROM
                        task_search s
                      WHERE
                        s.task_id = t.id
                    ),
                    ''::tsvector
                  )
                ) @@ task_search_query ($29)
            )
          ),
          0
        )::int
      FROM
        task_list_deltas d
      WHERE
        d.project_id = $30::uuid
        AND d.version > $31::bigint
    )
    ELSE (
      SELECT
        count(*)::int
      FROM
        search_hits h
        JOIN tasks t ON t.id = h.task_id
      WHERE
        t.project_id = $32::uuid
        AND t.deleted_at IS NULL
        AND EXISTS (
          SELECT
            1
          FROM
            task_search s
          WHERE
            s.task_id = t.id
            AND (s.heading || s.comments) @@ task_search_query ($33)
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
      t.position <= $34
  ) AS tasks,
  next.cursor_at AS next,
  (
    SELECT
      count(*)
    FROM
      search_hits
  ) > $35 AS overflowed
FROM
  version
  LEFT JOIN (
    SELECT
      t.cursor_at
    FROM
      shown t
    WHERE
      t.position = $36
      AND EXISTS (
        SELECT
          1
        FROM
          shown
        WHERE
          shown.position > $37
      )
  ) next ON true;
