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
          COALESCE(s.closed_at, now()) AS until,
          CASE
            WHEN s.status = 'closed' THEN s.closed_start_date
            ELSE s.start_date
          END AS start_date,
          CASE
            WHEN s.status = 'closed' THEN s.closed_end_date
            ELSE s.end_date
          END AS end_date,
          -- The days ahead, up to the endDate: an active sprint's only.
          CASE
            WHEN s.status = 'active' THEN s.end_date
          END AS ahead_until,
          (
            SELECT
              COALESCE(sum(c.committed_estimate), 0)
            FROM
              sprint_scope c
            WHERE
              c.sprint_id = s.id
              AND c.committed
          ) AS committed
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
          d::date > (s.until AT TIME ZONE 'Europe/Madrid')::date AS ahead,
          LEAST(((d + interval '1 day') AT TIME ZONE 'Europe/Madrid') - interval '1 millisecond', s.until) AS until
        FROM
          sprint s,
          -- Madrid midnights, as timestamps without a zone: day + 1 at Madrid is then the instant the day ends.
          generate_series(
            (s.activated_at AT TIME ZONE 'Europe/Madrid')::date::timestamp,
            GREATEST((s.until AT TIME ZONE 'Europe/Madrid')::date, s.ahead_until)::timestamp,
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
          d.ahead,
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
          ) AS completed,
          json_build_object(
            'tasks',
            count(*) FILTER (
              WHERE
                x.in_scope
                AND x.status = 'cancelled'
            ),
            'points',
            COALESCE(
              sum(x.estimate) FILTER (
                WHERE
                  x.in_scope
                  AND x.status = 'cancelled'
              ),
              0
            )::float8,
            'unestimated',
            count(*) FILTER (
              WHERE
                (
                  x.in_scope
                  AND x.status = 'cancelled'
                )
                AND x.estimate IS NULL
            )
          ) AS cancelled
        FROM
          days d
          LEFT JOIN states x ON NOT d.ahead
          AND x.at <= d.until
          AND (
            x.next_at IS NULL
            OR x.next_at > d.until
          )
        GROUP BY
          d.day,
          d.ahead
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
                  CASE
                    WHEN p.ahead THEN NULL
                    ELSE p.scope
                  END,
                  'completed',
                  CASE
                    WHEN p.ahead THEN NULL
                    ELSE p.completed
                  END,
                  'cancelled',
                  CASE
                    WHEN p.ahead THEN NULL
                    ELSE p.cancelled
                  END,
                  'remaining',
                  CASE
                    WHEN p.ahead THEN NULL
                    ELSE json_build_object(
                      'tasks',
                      ((p.scope ->> 'tasks')::int - (p.completed ->> 'tasks')::int - (p.cancelled ->> 'tasks')::int),
                      'points',
                      (
                        (p.scope ->> 'points')::numeric - (p.completed ->> 'points')::numeric - (p.cancelled ->> 'points')::numeric
                      )::float8,
                      'unestimated',
                      (
                        (p.scope ->> 'unestimated')::int - (p.completed ->> 'unestimated')::int - (p.cancelled ->> 'unestimated')::int
                      )
                    )
                  END,
                  -- From the committed points on startDate to 0 on endDate (0 on a one-day window's day).
                  'ideal',
                  CASE
                    WHEN s.start_date IS NULL
                    OR s.end_date IS NULL
                    OR p.day NOT BETWEEN s.start_date AND s.end_date THEN NULL
                    WHEN s.end_date = s.start_date THEN 0
                    ELSE round(s.committed * (s.end_date - p.day) / (s.end_date - s.start_date), 1)::float8
                  END
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
      sprint s
  ) answer;
