-- GET /api/v1/reports/velocity?last=3
-- Velocity over the last closed sprints.
-- After the key look-up (sql/every-request.sql).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- A statement (PrismaService.sql):
-- 1.
SELECT
  velocity::text AS velocity
FROM
  (
    WITH
      closed AS (
        SELECT
          s.id,
          s.name,
          s.closed_at,
          s.closed_tallies AS tallies
        FROM
          sprints s
        WHERE
          s.project_id = $1::uuid
          AND s.status = 'closed'
          AND s.closed_tallies IS NOT NULL
        ORDER BY
          s.closed_at DESC,
          s.id DESC
        LIMIT
          $2
      )
    SELECT
      json_build_object(
        'sprints',
        COALESCE(
          json_agg(
            json_build_object(
              'id',
              c.id,
              'name',
              c.name,
              'closedAt',
              to_char(c.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'committed',
              c.tallies -> 'committed',
              'completed',
              c.tallies -> 'completed'
            )
            ORDER BY
              c.closed_at DESC,
              c.id DESC
          ),
          '[]'::json
        ),
        'average',
        json_build_object(
          'tasks',
          COALESCE(avg((c.tallies -> 'completed' ->> 'tasks')::float8), 0),
          'points',
          COALESCE(avg((c.tallies -> 'completed' ->> 'points')::float8), 0)
        )
      ) AS velocity
    FROM
      closed c
  ) answer;
