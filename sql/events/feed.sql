-- GET /api/v1/events?after=0&limit=5
-- The change feed from the start.
-- After the key look-up (sql/every-request.sql).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- A statement (PrismaService.sql):
-- 1.
WITH
  page AS (
    SELECT
      e.*
    FROM
      events e
    WHERE
      e.project_id = $1::uuid
      AND e.sequence > $2
    ORDER BY
      e.sequence
    LIMIT
      $3
  ),
  shown AS (
    SELECT
      *
    FROM
      page
    ORDER BY
      sequence
    LIMIT
      $4
  )
SELECT
  (
    SELECT
      COALESCE(
        json_agg(
          json_build_object(
            'id',
            e.id,
            'sequence',
            e.sequence,
            'type',
            e.type,
            'occurredAt',
            to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'actor',
            e.actor,
            'data',
            e.data
          )
          ORDER BY
            e.sequence
        ),
        '[]'::json
      )::text
    FROM
      shown e
  ) AS events,
  (
    SELECT
      count(*)::int
    FROM
      shown
  ) AS returned,
  (
    SELECT
      max(sequence)::text
    FROM
      shown
  ) AS last,
  (
    SELECT
      count(*)
    FROM
      page
  ) > $5 AS has_more,
  COALESCE(
    (
      SELECT
        last_sequence
      FROM
        event_sequences
      WHERE
        project_id = $6::uuid
    ),
    0
  )::text AS last_sequence,
  COALESCE(
    (
      SELECT
        pruned_through
      FROM
        event_sequences
      WHERE
        project_id = $7::uuid
    ),
    0
  )::text AS pruned_through;
