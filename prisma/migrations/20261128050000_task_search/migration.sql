-- hand-written: the full-text search document of each task (decisions.md section 25, `search`;
-- docs/finding-work.md#search), kept by triggers in the transaction of every change it reads.
--
-- One weighted tsvector per task in a table of its own, so that a comment changes a small row
-- and a GIN index entry, not the task row and its many indexes: the title (weight A), the
-- description (B) and the live comments' bodies (C). A query must see them as one document
-- (`invoice paid`: one word in the title, the other in a comment), so they are one tsvector.
CREATE EXTENSION IF NOT EXISTS "unaccent";

-- unaccent(text) is STABLE (it finds its dictionary through search_path); schema-qualified,
-- with the dictionary named, it is as immutable as an index expression needs.
CREATE FUNCTION "task_search_unaccent"(value TEXT) RETURNS TEXT
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, value) $$;

-- The words of one part, with one weight. The 'simple' configuration lower-cases and neither
-- stems nor drops stop words (prefixes do the stemming's job, in every language). The leading
-- marker word, deleted again, leaves a gap in the positions: a phrase does not match across two
-- parts (the end of the title and the start of the description, or two comments).
CREATE FUNCTION "task_search_words"(body TEXT, weight "char") RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT setweight(ts_delete(to_tsvector('simple'::regconfig,
           public.task_search_unaccent('zqxsep ' || COALESCE(body, ''))), 'zqxsep'::text), weight) $$;

CREATE FUNCTION "task_search_heading"(title TEXT, description TEXT) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT public.task_search_words(title, 'A') || public.task_search_words(description, 'B') $$;

-- A search as the query: websearch_to_tsquery's grammar (words all required, "a phrase",
-- -word, or; punctuation is never an error, no word at all is the empty query that matches
-- nothing), then `:*` on every lexeme so that each word also matches as a prefix. The lexemes
-- come quoted by PostgreSQL's own tsquery output ('' and \ escaped), never from the client's text.
CREATE FUNCTION "task_search_query"(search TEXT) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT regexp_replace(websearch_to_tsquery('simple'::regconfig, public.task_search_unaccent(search))::text,
                              $r$'((?:[^'\\]|''|\\.)*)'$r$, $r$'\1':*$r$, 'g')::tsquery $$;

CREATE TABLE "task_search" (
  "task_id" UUID NOT NULL,
  "project_id" UUID NOT NULL,
  -- The live comments' words (weight C), kept apart so that a title edit need not read every comment.
  "comments" tsvector NOT NULL DEFAULT '',
  -- heading(title, description) || comments: what a search matches and ranks.
  "document" tsvector NOT NULL,
  CONSTRAINT "task_search_pkey" PRIMARY KEY ("task_id"),
  CONSTRAINT "task_search_project_id_task_id_fkey" FOREIGN KEY ("project_id", "task_id")
    REFERENCES "tasks"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "task_search_document_idx" ON "task_search" USING gin ("document");

-- The comments' words of a task, rebuilt (an edit or a deletion: words cannot be taken out of a
-- tsvector). Beyond PostgreSQL's tsvector size (1 MB) only the first 100 000 characters of the
-- comments are searchable, rather than the write failing.
CREATE FUNCTION "task_search_comment_words"(task UUID) RETURNS tsvector LANGUAGE plpgsql AS $$
DECLARE
  bodies TEXT;
BEGIN
  SELECT string_agg(c."body", ' zqxsep ' ORDER BY c."created_at", c."id") INTO bodies
    FROM "comments" c WHERE c."task_id" = task AND c."body" IS NOT NULL AND c."deleted_at" IS NULL;
  BEGIN
    RETURN public.task_search_words(bodies, 'C');
  EXCEPTION WHEN program_limit_exceeded THEN
    RETURN public.task_search_words(left(bodies, 100000), 'C');
  END;
END
$$;

CREATE FUNCTION "task_search_rebuild"(task_ids UUID[]) RETURNS VOID LANGUAGE sql AS $$
  -- Tasks deleted in this statement (a purge's cascade) keep no document to rebuild.
  UPDATE "task_search" s
     SET "comments" = w.words, "document" = public.task_search_heading(t."title", t."description") || w.words
    FROM "tasks" t, LATERAL (SELECT public.task_search_comment_words(t."id") AS words) w
   WHERE s."task_id" = ANY(task_ids) AND t."id" = s."task_id";
$$;

CREATE FUNCTION "task_search_task_written"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "task_search" ("task_id", "project_id", "document")
    VALUES (NEW."id", NEW."project_id", public.task_search_heading(NEW."title", NEW."description"));
  ELSE
    UPDATE "task_search" SET "document" = public.task_search_heading(NEW."title", NEW."description") || "comments"
     WHERE "task_id" = NEW."id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "tasks_search_inserted" AFTER INSERT ON "tasks"
  FOR EACH ROW EXECUTE FUNCTION "task_search_task_written"();
CREATE TRIGGER "tasks_search_updated" AFTER UPDATE OF "title", "description" ON "tasks"
  FOR EACH ROW WHEN (OLD."title" IS DISTINCT FROM NEW."title" OR OLD."description" IS DISTINCT FROM NEW."description")
  EXECUTE FUNCTION "task_search_task_written"();

-- A new comment appends its words: the cost of a comment does not grow with its task's other
-- comments' count in statements, only in the bytes of the task's tsvector copied.
CREATE FUNCTION "task_search_comment_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  words tsvector := public.task_search_words(NEW."body", 'C');
BEGIN
  BEGIN
    UPDATE "task_search" SET "comments" = "comments" || words, "document" = "document" || words
     WHERE "task_id" = NEW."task_id";
  EXCEPTION WHEN program_limit_exceeded THEN
    -- The task's words are at PostgreSQL's tsvector size: this comment is kept, not searchable.
    NULL;
  END;
  RETURN NULL;
END
$$;

CREATE FUNCTION "task_search_comments_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM public.task_search_rebuild(ARRAY(SELECT DISTINCT o."task_id" FROM old_rows o));
  ELSE
    PERFORM public.task_search_rebuild(ARRAY(
      SELECT DISTINCT n."task_id" FROM new_rows n JOIN old_rows o ON o."id" = n."id"
       WHERE n."body" IS DISTINCT FROM o."body" OR n."deleted_at" IS DISTINCT FROM o."deleted_at"));
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "comments_search_inserted" AFTER INSERT ON "comments"
  FOR EACH ROW WHEN (NEW."body" IS NOT NULL AND NEW."deleted_at" IS NULL)
  EXECUTE FUNCTION "task_search_comment_inserted"();
CREATE TRIGGER "comments_search_updated" AFTER UPDATE ON "comments"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "task_search_comments_changed"();
CREATE TRIGGER "comments_search_deleted" AFTER DELETE ON "comments"
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "task_search_comments_changed"();

-- Searched lists now read comments: a change of a task's words raises its project's task list
-- version like any change of what the lists show (src/tasks/task-list-cache.ts).
CREATE CONSTRAINT TRIGGER "task_search_raise_list_version"
  AFTER UPDATE ON "task_search"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "raise_task_list_version"();

INSERT INTO "task_search" ("task_id", "project_id", "document")
SELECT t."id", t."project_id", public.task_search_heading(t."title", t."description") FROM "tasks" t;
SELECT public.task_search_rebuild(ARRAY(SELECT DISTINCT c."task_id" FROM "comments" c));
