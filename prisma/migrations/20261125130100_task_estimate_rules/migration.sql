-- hand-written: the estimate's range, and list deltas that carry every column a filter may read.

-- decisions.md section 18: 0 to 1000 points (the one decimal place is the column's scale).
-- test/field-tables.e2e-spec.ts binds this range to the row of `estimate` in src/tasks/task-fields.ts.
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_estimate_range" CHECK ("estimate" >= 0 AND "estimate" <= 1000);

-- The list deltas now keep the whole row but its description (no filter reads it), instead of a
-- list of columns kept in step with the filters by hand: a filter on a new column (`estimated`)
-- brings remembered totals up to date with no edit here.
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
    CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) - 'description' END
  );
  RETURN NULL;
END
$$;

-- Deltas written before carry no estimate: totals remembered from before are counted again.
UPDATE "task_list_versions" SET "deltas_from" = "version";
