-- hand-written: what the backlog order needs that schema.prisma cannot say.

-- Ranks compare byte by byte (decisions.md section 18), whatever the database's collation.
ALTER TABLE "tasks" ALTER COLUMN "rank" TYPE VARCHAR(64) COLLATE "C";

-- An opaque ASCII string of 1 to 64 characters.
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_rank_ascii" CHECK ("rank" ~ '^[!-~]{1,64}$');

-- No two tasks of a project share a rank, under any concurrency. Checked at the end of each
-- statement (DEFERRABLE INITIALLY IMMEDIATE), not row by row, so that one statement may rewrite
-- the ranks of several tasks among themselves (a rebalance).
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_project_rank_unique" UNIQUE ("project_id", "rank") DEFERRABLE INITIALLY IMMEDIATE;

-- The list in backlog order (sort=rank) walks the project's live tasks by rank from the cursor.
CREATE INDEX "tasks_live_rank_order" ON "tasks"("project_id", "rank") WHERE "deleted_at" IS NULL;
