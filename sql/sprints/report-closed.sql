-- GET /api/v1/sprints/{id}/report
-- A closed sprint’s report: the one frozen at its close.
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
