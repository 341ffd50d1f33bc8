-- AlterTable
ALTER TABLE "sprints" ADD COLUMN     "closed_tallies" JSON;

-- CreateTable
CREATE TABLE "sprint_scope" (
    "sprint_id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "committed" BOOLEAN NOT NULL DEFAULT false,
    "committed_estimate" DECIMAL(5,1),
    "entered" BOOLEAN NOT NULL DEFAULT false,
    "entered_estimate" DECIMAL(5,1),
    "left_estimate" DECIMAL(5,1),
    "reestimated" DECIMAL(12,1) NOT NULL DEFAULT 0,
    "in_scope" BOOLEAN NOT NULL,
    "carried_over" BOOLEAN NOT NULL DEFAULT false,
    "estimate" DECIMAL(5,1),
    "status" "task_status" NOT NULL,
    "title" VARCHAR(200) NOT NULL,

    CONSTRAINT "sprint_scope_pkey" PRIMARY KEY ("sprint_id","task_id")
);

-- AddForeignKey
ALTER TABLE "sprint_scope" ADD CONSTRAINT "sprint_scope_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

