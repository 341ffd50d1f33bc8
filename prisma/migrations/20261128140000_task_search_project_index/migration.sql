-- hand-written: a search reads its own project's words only (issue 38).
--
-- The GIN index held every project's words as one: a search read the matches of every project
-- and kept its own, so a project's broad search cost what the whole installation's matches cost.
-- Keyed by the project first (btree_gin gives a uuid a GIN key), a search reads its project's
-- matches alone: a third of 100 000 tasks, beside 9 other projects with the same words, counted in
-- 31 ms instead of 58 (docs/performance.md). The name stays: src/tasks/finding/text-search.ts
-- writes the document's expression, and a test finds the index by name in a search's plan.
-- Not CONCURRENTLY (the migrator applies a migration in one transaction): task and comment writes
-- wait while the index builds, about 3 s at 100 000 tasks and 30 s at a million here.
CREATE EXTENSION IF NOT EXISTS "btree_gin";

DROP INDEX "task_search_document_idx";
CREATE INDEX "task_search_document_idx" ON "task_search" USING gin ("project_id", ("heading" || "comments"));
