-- GET /api/v1/tasks?limit=0
-- What every /api/v1 request sends before its own statements: its key looked up (src/auth).
-- Written by `npm run sql:snapshot` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the
-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...

-- A prepared statement (PrismaService.preparedSql):
-- 1.
SELECT
  id,
  project_id AS "projectId",
  name,
  permissions,
  revoked_at IS NOT NULL AS revoked
FROM
  api_keys
WHERE
  secret_hash = $1;
