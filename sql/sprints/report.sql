-- GET /api/v1/sprints/{id}/report
-- The active sprint’s report, computed from sprint_scope.
-- After the key look-up (sql/every-request.sql).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- A statement (PrismaService.sql):
-- 1.
SELECT
  status::text,
  report::text
FROM
  sprints
WHERE
  id = $1::uuid
  AND project_id = $2::uuid;

-- A statement (PrismaService.sql):
-- 2.
SELECT
  report::text AS report
FROM
  (
    SELECT
      json_build_object(
        'sprintId',
        s.id,
        'status',
        s.status,
        'activatedAt',
        to_char(s.activated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'closedAt',
        to_char(s.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'committed',
        CASE
          WHEN s.status = 'planned' THEN NULL
          ELSE json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                c.committed
            ),
            'points',
            COALESCE(
              sum(c.committed_estimate) FILTER (
                WHERE
                  c.committed
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (c.committed)
                AND c.committed_estimate IS NULL
            )
          )
        END,
        'added',
        CASE
          WHEN s.status = 'planned' THEN NULL
          ELSE json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                c.added
            ),
            'points',
            COALESCE(
              sum(c.entered_estimate) FILTER (
                WHERE
                  c.added
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (c.added)
                AND c.entered_estimate IS NULL
            )
          )
        END,
        'removed',
        CASE
          WHEN s.status = 'planned' THEN NULL
          ELSE json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                c.removed
            ),
            'points',
            COALESCE(
              sum(c.left_estimate) FILTER (
                WHERE
                  c.removed
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (c.removed)
                AND c.left_estimate IS NULL
            )
          )
        END,
        'reestimated',
        CASE
          WHEN s.status = 'planned' THEN NULL
          ELSE COALESCE(sum(c.reestimated), 0)::float8
        END,
        'completed',
        CASE
          WHEN s.status = 'planned' THEN NULL
          ELSE json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                c.in_end
                AND c.status = 'done'
            ),
            'points',
            COALESCE(
              sum(c.estimate) FILTER (
                WHERE
                  c.in_end
                  AND c.status = 'done'
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (
                  c.in_end
                  AND c.status = 'done'
                )
                AND c.estimate IS NULL
            )
          )
        END,
        'cancelled',
        CASE
          WHEN s.status = 'planned' THEN NULL
          ELSE json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                c.in_end
                AND c.status = 'cancelled'
            ),
            'points',
            COALESCE(
              sum(c.estimate) FILTER (
                WHERE
                  c.in_end
                  AND c.status = 'cancelled'
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (
                  c.in_end
                  AND c.status = 'cancelled'
                )
                AND c.estimate IS NULL
            )
          )
        END,
        'carriedOver',
        CASE
          WHEN s.status = 'closed' THEN json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                c.carried_over
            ),
            'points',
            COALESCE(
              sum(c.estimate) FILTER (
                WHERE
                  c.carried_over
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (c.carried_over)
                AND c.estimate IS NULL
            )
          )
        END,
        'scope',
        json_build_object(
          'tasks',
          count(*) FILTER (
            WHERE
              c.in_end
          ),
          'points',
          COALESCE(
            sum(c.estimate) FILTER (
              WHERE
                c.in_end
            ),
            0
          )::float8,
          'unestimated',
          count(*) FILTER (
            WHERE
              (c.in_end)
              AND c.estimate IS NULL
          )
        ),
        'tasks',
        COALESCE(
          json_agg(
            json_build_object(
              'id',
              c.task_id,
              'title',
              c.title,
              'committed',
              c.committed,
              'added',
              c.added,
              'removed',
              c.removed,
              'carriedOver',
              c.carried_over,
              'status',
              c.status,
              'estimate',
              c.estimate::float8
            )
            ORDER BY
              c.rank NULLS LAST,
              c.task_id
          ) FILTER (
            WHERE
              c.task_id IS NOT NULL
          ),
          '[]'::json
        )
      ) AS report
    FROM
      sprints s
      LEFT JOIN LATERAL (
        SELECT
          c.task_id,
          c.committed,
          c.committed_estimate,
          c.entered_estimate,
          c.left_estimate,
          c.reestimated,
          c.in_scope
          OR c.carried_over AS in_end,
          c.carried_over,
          NOT c.committed
          AND c.entered AS added,
          (
            c.committed
            OR c.entered
          )
          AND NOT (
            c.in_scope
            OR c.carried_over
          ) AS removed,
          t.rank,
          COALESCE(t.title, c.title) AS title,
          -- As at the close (or now) for a task still counted there; as it is now for one that left.
          CASE
            WHEN c.in_scope
            OR c.carried_over
            OR t.id IS NULL THEN c.status
            ELSE t.status
          END AS status,
          CASE
            WHEN c.in_scope
            OR c.carried_over
            OR t.id IS NULL THEN c.estimate
            ELSE t.estimate
          END AS estimate
        FROM
          sprint_scope c
          -- The task as it is now. Those in the sprint now (most), in one pass of its sprint_id index
          -- and hashed (OFFSET 0: not looked up one by one through the primary key); the others by
          -- their primary key, task by task (OFFSET 0 keeps the planner from hashing the whole table).
          LEFT JOIN (
            SELECT
              t.id,
              t.rank,
              t.title,
              t.status,
              t.estimate
            FROM
              tasks t
            WHERE
              t.sprint_id = $1::uuid
            OFFSET
              0
          ) here ON here.id = c.task_id
          LEFT JOIN LATERAL (
            SELECT
              t.id,
              t.rank,
              t.title,
              t.status,
              t.estimate
            FROM
              tasks t
            WHERE
              here.id IS NULL
              AND t.id = c.task_id
            OFFSET
              0
          ) gone ON true
          CROSS JOIN LATERAL (
            SELECT
              COALESCE(here.id, gone.id) AS id,
              COALESCE(here.rank, gone.rank) AS rank,
              COALESCE(here.title, gone.title) AS title,
              COALESCE(here.status, gone.status) AS status,
              CASE
                WHEN here.id IS NULL THEN gone.estimate
                ELSE here.estimate
              END AS estimate
          ) t
        WHERE
          c.sprint_id = $2::uuid
          AND s.status <> 'planned'
        UNION ALL
        SELECT
          t.id AS task_id,
          false AS committed,
          NULL::numeric AS committed_estimate,
          NULL::numeric AS entered_estimate,
          NULL::numeric AS left_estimate,
          0::numeric AS reestimated,
          true AS in_end,
          false AS carried_over,
          false AS added,
          false AS removed,
          t.rank,
          t.title,
          t.status,
          t.estimate
        FROM
          tasks t
        WHERE
          t.sprint_id = $3::uuid
          AND t.deleted_at IS NULL
          AND s.status = 'planned'
      ) c ON true
    WHERE
      s.id = $4::uuid
      AND s.project_id = $5::uuid
    GROUP BY
      s.id
  ) answer;
