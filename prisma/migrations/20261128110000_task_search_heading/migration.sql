-- hand-written: a comment costs less to index (issue 38: the comment write's budget).
--
-- The search document was stored whole beside the comments' words, so each comment wrote the
-- task's comment words twice and, in a subtransaction, raised the project's task list version.
-- Now a row keeps the heading (title, description) and the comments' words once each; the GIN
-- index is on their concatenation (src/tasks/finding/text-search.ts writes the same expression).
-- Searched lists are no longer remembered by the task list version alone but with the project's
-- event sequence (src/tasks/task-reader.service.ts): every change of a task's words is a recorded
-- change, so the deferred raise on task_search goes.
-- First: the deferred trigger would queue an event for every row the UPDATE below changes, and
-- PostgreSQL refuses to ALTER a table with events pending in the transaction.
DROP TRIGGER "task_search_raise_list_version" ON "task_search";

ALTER TABLE "task_search" ADD COLUMN "heading" tsvector;
UPDATE "task_search" s SET "heading" = public.task_search_heading(t."title", t."description")
  FROM "tasks" t WHERE t."id" = s."task_id";
ALTER TABLE "task_search" ALTER COLUMN "heading" SET NOT NULL;

DROP INDEX "task_search_document_idx";
ALTER TABLE "task_search" DROP COLUMN "document";
CREATE INDEX "task_search_document_idx" ON "task_search" USING gin (("heading" || "comments"));

CREATE OR REPLACE FUNCTION "task_search_rebuild"(task_ids UUID[]) RETURNS VOID LANGUAGE sql AS $$
  -- Tasks deleted in this statement (a purge's cascade) keep no document to rebuild.
  UPDATE "task_search" s SET "comments" = public.task_search_comment_words(s."task_id")
   WHERE s."task_id" = ANY(task_ids);
$$;

CREATE OR REPLACE FUNCTION "task_search_task_written"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "task_search" ("task_id", "project_id", "heading")
    VALUES (NEW."id", NEW."project_id", public.task_search_heading(NEW."title", NEW."description"));
  ELSE
    UPDATE "task_search" SET "heading" = public.task_search_heading(NEW."title", NEW."description")
     WHERE "task_id" = NEW."id";
  END IF;
  RETURN NULL;
END
$$;

-- A new comment appends its words. A document of at most 400 distinct words stays below
-- PostgreSQL's 1 MB per tsvector, which counts each word (at most 2 047 bytes, aligned) with its
-- positions (at most 256, 2 bytes each, and their count): 400 x 2 562 bytes. It is appended to as
-- is; only a larger one takes the subtransaction that keeps the comment when its words no longer fit.
CREATE OR REPLACE FUNCTION "task_search_comment_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  words tsvector := public.task_search_words(NEW."body", 'C');
BEGIN
  UPDATE "task_search" SET "comments" = "comments" || words
   WHERE "task_id" = NEW."task_id" AND length("heading") + length("comments") + length(words) <= 400;
  IF NOT FOUND THEN
    BEGIN
      UPDATE "task_search" SET "comments" = "comments" || words WHERE "task_id" = NEW."task_id";
    EXCEPTION WHEN program_limit_exceeded THEN
      -- The task's words are at PostgreSQL's tsvector size: this comment is kept, not searchable.
      NULL;
    END;
  END IF;
  RETURN NULL;
END
$$;
