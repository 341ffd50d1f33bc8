-- CreateTable
CREATE TABLE "task_list_versions" (
    "project_id" UUID NOT NULL,
    "version" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "task_list_versions_pkey" PRIMARY KEY ("project_id")
);

-- AddForeignKey
ALTER TABLE "task_list_versions" ADD CONSTRAINT "task_list_versions_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

