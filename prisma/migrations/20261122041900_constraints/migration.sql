-- hand-written: rules that prisma/schema.prisma cannot express.
-- A later `prisma migrate dev` proposes to drop these objects: remove those lines from
-- the migration it generates (prisma/README.md). The first line marks this migration
-- for test/migrator.e2e-spec.ts, which checks schema.prisma + hand-written = migrations.

-- A task's sprint, assignee and parent belong to the task's own project. These
-- composite keys sit beside Prisma's single-column ones (which give the ON DELETE
-- behaviour); MATCH SIMPLE skips them while the column is null.
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_same_project_sprint_fkey"
  FOREIGN KEY ("project_id", "sprint_id") REFERENCES "sprints"("project_id", "id");
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_same_project_assignee_fkey"
  FOREIGN KEY ("project_id", "assignee_id") REFERENCES "memberships"("project_id", "id");
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_same_project_parent_fkey"
  FOREIGN KEY ("project_id", "parent_id") REFERENCES "tasks"("project_id", "id") ON DELETE CASCADE;

-- At most one active sprint per project, held by the database so that two
-- concurrent activations cannot both win.
CREATE UNIQUE INDEX "sprints_one_active_per_project" ON "sprints"("project_id") WHERE "status" = 'active';

-- The list order (created_at desc, id desc) over live tasks only, and the trash
-- order (deleted_at desc, id desc) over trashed ones only.
CREATE INDEX "tasks_live_list_order" ON "tasks"("project_id", "created_at" DESC, "id" DESC) WHERE "deleted_at" IS NULL;
CREATE INDEX "tasks_trash_order" ON "tasks"("project_id", "deleted_at" DESC, "id" DESC) WHERE "deleted_at" IS NOT NULL;

ALTER TABLE "tasks" ADD CONSTRAINT "tasks_title_not_blank" CHECK ("title" ~ '[^[:space:]]');
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_not_own_parent" CHECK ("parent_id" IS NULL OR "parent_id" <> "id");
ALTER TABLE "sprints" ADD CONSTRAINT "sprints_name_not_blank" CHECK ("name" ~ '[^[:space:]]');
ALTER TABLE "sprints" ADD CONSTRAINT "sprints_date_window" CHECK ("start_date" IS NULL OR "end_date" IS NULL OR "start_date" <= "end_date");
ALTER TABLE "task_dependencies" ADD CONSTRAINT "task_dependencies_not_self" CHECK ("task_id" <> "blocked_by_id");
ALTER TABLE "labels" ADD CONSTRAINT "labels_color_hex" CHECK ("color" ~ '^#[0-9a-f]{6}$');
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_known_permissions"
  CHECK ("permissions" <@ ARRAY['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage']::TEXT[]);

-- The key that signs list cursors (src/common/pagination/cursor.ts): random, made once
-- per database, so that cursors outlive restarts and work across instances.
INSERT INTO "service_settings" ("name", "value")
VALUES ('cursor_signing_key', encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || clock_timestamp()::text, 'UTF8')), 'hex'))
ON CONFLICT ("name") DO NOTHING;
