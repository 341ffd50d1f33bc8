-- GET /api/v1/tasks?limit=2
-- The same page again, nothing changed since: the version read alone (TaskListCache).
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
