-- AlterTable
-- (Prisma writes `ADD COLUMN "rank" VARCHAR(64) NOT NULL`; tasks that exist already get their
-- place first: the backlog order of a project's existing tasks is their creation order, oldest
-- at the top, below the ranks new tasks get (src/tasks/task-ranks.ts: 2^62 + sequence x 2^32),
-- a 2^32 gap apart, as 16 lower-case hex digits.)
ALTER TABLE "tasks" ADD COLUMN     "rank" VARCHAR(64);
UPDATE "tasks" t SET "rank" = lpad(to_hex(4611686018427387904 - o.from_bottom * 4294967296), 16, '0')
  FROM (SELECT "id", row_number() OVER (PARTITION BY "project_id" ORDER BY "created_at" DESC, "id" DESC) AS from_bottom FROM "tasks") o
 WHERE o."id" = t."id";
ALTER TABLE "tasks" ALTER COLUMN "rank" SET NOT NULL;
