-- GET /api/v1/sprints/{id}/burndown
-- The active sprint’s burndown, from sprint_ledger.
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
  burndown::text AS burndown
FROM
  (
    WITH
      sprint AS (
        SELECT
          s.id,
          s.activated_at,
          COALESCE(s.closed_at, now()) AS until
        FROM
          sprints s
        WHERE
          s.id = $1::uuid
          AND s.project_id = $2::uuid
          AND s.activated_at IS NOT NULL
      ),
      days AS (
        SELECT
          d::date AS day,
          LEAST(((d + interval '1 day') AT TIME ZONE 'Europe/Madrid') - interval '1 millisecond', s.until) AS until
        FROM
          sprint s,
          -- Madrid midnights, as timestamps without a zone: day + 1 at Madrid is then the instant the day ends.
          generate_series(
            (s.activated_at AT TIME ZONE 'Europe/Madrid')::date::timestamp,
            (s.until AT TIME ZONE 'Europe/Madrid')::date::timestamp,
            interval '1 day'
          ) d
      ),
      -- Each ledger row holds its task's state from its time until the task's next row (one pass
      -- in the index's order); a day counts the rows holding at its end.
      states AS (
        SELECT
          l.in_scope
          OR l.carried_over AS in_scope,
          l.estimate,
          l.status,
          l.at,
          lead(l.at) OVER (
            PARTITION BY
              l.task_id
            ORDER BY
              l.id
          ) AS next_at
        FROM
          sprint_ledger l
        WHERE
          l.sprint_id = $3::uuid
      ),
      per_day AS (
        SELECT
          d.day,
          json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                x.in_scope
            ),
            'points',
            COALESCE(
              sum(x.estimate) FILTER (
                WHERE
                  x.in_scope
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (x.in_scope)
                AND x.estimate IS NULL
            )
          ) AS scope,
          json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                x.in_scope
                AND x.status = 'done'
            ),
            'points',
            COALESCE(
              sum(x.estimate) FILTER (
                WHERE
                  x.in_scope
                  AND x.status = 'done'
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (
                  x.in_scope
                  AND x.status = 'done'
                )
                AND x.estimate IS NULL
            )
          ) AS completed
        FROM
          days d
          LEFT JOIN states x ON x.at <= d.until
          AND (
            x.next_at IS NULL
            OR x.next_at > d.until
          )
        GROUP BY
          d.day
      )
    SELECT
      json_build_object(
        'days',
        COALESCE(
          (
            SELECT
              json_agg(
                json_build_object(
                  'date',
                  to_char(p.day, 'YYYY-MM-DD'),
                  'scope',
                  p.scope,
                  'completed',
                  p.completed,
                  'remaining',
                  json_build_object(
                    'tasks',
                    (p.scope ->> 'tasks')::int - (p.completed ->> 'tasks')::int,
                    'points',
                    (p.scope ->> 'points')::float8 - (p.completed ->> 'points')::float8,
                    'unestimated',
                    (p.scope ->> 'unestimated')::int - (p.completed ->> 'unestimated')::int
                  )
                )
                ORDER BY
                  p.day
              )
            FROM
              per_day p
          ),
          '[]'::json
        )
      ) AS burndown
    FROM
      sprint
  ) answer;
