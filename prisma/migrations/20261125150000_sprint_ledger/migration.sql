-- AlterTable
ALTER TABLE "sprints" ADD COLUMN     "activated_at" TIMESTAMPTZ(3),
ADD COLUMN     "closed_at" TIMESTAMPTZ(3),
ADD COLUMN     "report" JSON;

-- CreateTable
CREATE TABLE "sprint_ledger" (
    "id" BIGSERIAL NOT NULL,
    "project_id" UUID NOT NULL,
    "sprint_id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "kind" VARCHAR(16) NOT NULL,
    "in_scope" BOOLEAN NOT NULL,
    "carried_over" BOOLEAN NOT NULL DEFAULT false,
    "estimate" DECIMAL(5,1),
    "status" "task_status" NOT NULL,
    "title" VARCHAR(200) NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sprint_ledger_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "sprint_ledger_sprint_id_task_id_id_idx" ON "sprint_ledger"("sprint_id", "task_id", "id");

-- AddForeignKey
ALTER TABLE "sprint_ledger" ADD CONSTRAINT "sprint_ledger_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

