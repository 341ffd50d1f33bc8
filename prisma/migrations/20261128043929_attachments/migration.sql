-- CreateTable
CREATE TABLE "attachments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "project_id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "size" INTEGER NOT NULL,
    "content_type" VARCHAR(255) NOT NULL,
    "sha256" VARCHAR(64) NOT NULL,
    "author_key_id" UUID NOT NULL,
    "author_name" VARCHAR(200) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "attachments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "service_secrets" (
    "name" VARCHAR(100) NOT NULL,
    "value" VARCHAR(200) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "service_secrets_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "attachments_task_id_created_at_id_idx" ON "attachments"("task_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "attachments_project_id_sha256_idx" ON "attachments"("project_id", "sha256");

-- AddForeignKey
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_project_id_task_id_fkey" FOREIGN KEY ("project_id", "task_id") REFERENCES "tasks"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_project_id_author_key_id_fkey" FOREIGN KEY ("project_id", "author_key_id") REFERENCES "api_keys"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

