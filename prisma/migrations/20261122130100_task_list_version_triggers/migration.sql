-- hand-written: the triggers that keep task_list_versions current (schema.prisma says why).
--
-- Every transaction that changes anything a project's task lists show raises the project's
-- version in that same transaction: its tasks, their labels and dependencies (`blocked`),
-- and the sprints, members and labels that tasks embed by name. Raises are serialised by the
-- version row's lock, so a reader that sees version V sees exactly what every earlier reader
-- of V saw, and can reuse the total and the pages read then (src/tasks/task-list-cache.ts).
--
-- The triggers are deferred to commit: a transaction locks the version row last, after
-- every other row it locks, so two writers can never deadlock over it.
CREATE FUNCTION "raise_task_list_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed_project UUID := CASE WHEN TG_OP = 'DELETE' THEN OLD."project_id" ELSE NEW."project_id" END;
  -- Projects already raised by this transaction: once is enough (a transaction-local setting).
  raised TEXT := COALESCE(current_setting('task_list_versions.raised', true), '');
BEGIN
  IF strpos(raised, changed_project::text) > 0 THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('task_list_versions.raised', raised || changed_project::text || ' ', true);
  -- Nothing to do for a project deleted in the same transaction.
  INSERT INTO "task_list_versions" ("project_id", "version")
  SELECT p."id", 1 FROM "projects" p WHERE p."id" = changed_project
  ON CONFLICT ("project_id") DO UPDATE SET "version" = "task_list_versions"."version" + 1;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER "tasks_raise_list_version"
  AFTER INSERT OR UPDATE OR DELETE ON "tasks"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "raise_task_list_version"();

CREATE CONSTRAINT TRIGGER "task_labels_raise_list_version"
  AFTER INSERT OR UPDATE OR DELETE ON "task_labels"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "raise_task_list_version"();

CREATE CONSTRAINT TRIGGER "task_dependencies_raise_list_version"
  AFTER INSERT OR UPDATE OR DELETE ON "task_dependencies"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "raise_task_list_version"();

-- A new sprint, member or label is on no task yet: only changes and deletions count.
CREATE CONSTRAINT TRIGGER "sprints_raise_list_version"
  AFTER UPDATE OR DELETE ON "sprints"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "raise_task_list_version"();

CREATE CONSTRAINT TRIGGER "memberships_raise_list_version"
  AFTER UPDATE OR DELETE ON "memberships"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "raise_task_list_version"();

CREATE CONSTRAINT TRIGGER "labels_raise_list_version"
  AFTER UPDATE OR DELETE ON "labels"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "raise_task_list_version"();
