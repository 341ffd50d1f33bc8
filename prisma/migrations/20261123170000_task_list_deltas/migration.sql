-- AlterTable
ALTER TABLE "task_list_versions" ADD COLUMN     "deltas_from" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "task_list_deltas" (
    "id" BIGSERIAL NOT NULL,
    "project_id" UUID NOT NULL,
    "version" BIGINT NOT NULL,
    "old_row" JSONB,
    "new_row" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_list_deltas_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "task_list_deltas_project_id_version_idx" ON "task_list_deltas"("project_id", "version");

-- CreateIndex
CREATE INDEX "task_list_deltas_created_at_idx" ON "task_list_deltas"("created_at");

