-- hand-written: the trigger that keeps task_list_deltas (schema.prisma says what for).
--
-- At commit, after tasks_raise_list_version has raised (and locked) the project's version for
-- the same row change (deferred triggers of one event fire in name order: raise, then record),
-- each change of a task row is recorded with that version: the columns the list filters read,
-- before and after. Several changes of one row in one transaction give several deltas, whose
-- effects on a total add up to the change as a whole.
CREATE FUNCTION "record_task_list_delta"() RETURNS trigger LANGUAGE plpgsql AS $$
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
    CASE WHEN TG_OP <> 'INSERT' THEN jsonb_build_object(
      'id', OLD."id", 'project_id', OLD."project_id", 'title', OLD."title", 'status', OLD."status", 'priority', OLD."priority",
      'parent_id', OLD."parent_id", 'assignee_id', OLD."assignee_id", 'sprint_id', OLD."sprint_id", 'due_date', OLD."due_date",
      'updated_at', OLD."updated_at", 'deleted_at', OLD."deleted_at") END,
    CASE WHEN TG_OP <> 'DELETE' THEN jsonb_build_object(
      'id', NEW."id", 'project_id', NEW."project_id", 'title', NEW."title", 'status', NEW."status", 'priority', NEW."priority",
      'parent_id', NEW."parent_id", 'assignee_id', NEW."assignee_id", 'sprint_id', NEW."sprint_id", 'due_date', NEW."due_date",
      'updated_at', NEW."updated_at", 'deleted_at', NEW."deleted_at") END
  );
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER "tasks_record_list_delta"
  AFTER INSERT OR UPDATE OR DELETE ON "tasks"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "record_task_list_delta"();

-- A database that had tasks before this migration has no deltas for its earlier versions.
UPDATE "task_list_versions" SET "deltas_from" = "version";
