-- hand-written: indexes that schema.prisma cannot say (partial ones), for the trash and the backlog order.

-- A restore finds the subtasks trashed with a task (trashed_with_id) and locks them: without an
-- index it read the project's whole trash, twice per restore, so a restore cost grew with the
-- trash. Only tasks in the trash have a trashed_with_id: live tasks add nothing to this index.
CREATE INDEX "tasks_trashed_with" ON "tasks"("trashed_with_id") WHERE "trashed_with_id" IS NOT NULL;

-- sort=rank walks tasks_project_rank_unique (project_id, rank), skipping the few trashed tasks
-- it meets: this partial copy of it cost every create, and every update that is not HOT
-- (any change of updated_at), one more index entry.
DROP INDEX "tasks_live_rank_order";
