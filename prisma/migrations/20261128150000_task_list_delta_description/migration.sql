-- hand-written: a searched total brought up to date by the list deltas (issue 38).
--
-- A delta keeps the task row without its description (no filter reads it), but a search reads the
-- description's words: a delta now says whether its change replaced the description, and a
-- searched total is counted again when one did (src/tasks/finding/text-search.ts,
-- wordsKeptSince); otherwise each row image's description is the task's current one.
CREATE OR REPLACE FUNCTION "record_task_list_delta"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed_project UUID := CASE WHEN TG_OP = 'DELETE' THEN OLD."project_id" ELSE NEW."project_id" END;
  current_version BIGINT;
BEGIN
  SELECT v."version" INTO current_version FROM "task_list_versions" v WHERE v."project_id" = changed_project;
  -- No version: the project itself was deleted in this transaction.
  IF current_version IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO "task_list_deltas" ("project_id", "version", "old_row", "new_row")
  VALUES (
    changed_project,
    current_version,
    CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) - 'description' END,
    CASE WHEN TG_OP <> 'DELETE' THEN (to_jsonb(NEW) - 'description')
      || jsonb_build_object('description_changed', TG_OP = 'UPDATE' AND OLD."description" IS DISTINCT FROM NEW."description") END
  );
  RETURN NULL;
END
$$;

-- Deltas written before do not say: totals remembered from before are counted again.
UPDATE "task_list_versions" SET "deltas_from" = "version";
