-- CreateTable
CREATE TABLE "comments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "project_id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "parent_id" UUID,
    "body" VARCHAR(10000),
    "author_key_id" UUID NOT NULL,
    "author_name" VARCHAR(200) NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "edited_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "comments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "comment_revisions" (
    "comment_id" UUID NOT NULL,
    "number" INTEGER NOT NULL,
    "body" VARCHAR(10000) NOT NULL,
    "author_key_id" UUID NOT NULL,
    "author_name" VARCHAR(200) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "comment_revisions_pkey" PRIMARY KEY ("comment_id","number")
);

-- CreateTable
CREATE TABLE "comment_mentions" (
    "comment_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "project_id" UUID NOT NULL,
    "membership_id" UUID NOT NULL,

    CONSTRAINT "comment_mentions_pkey" PRIMARY KEY ("comment_id","position")
);

-- CreateIndex
CREATE INDEX "comments_task_id_created_at_id_idx" ON "comments"("task_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "comments_parent_id_idx" ON "comments"("parent_id");

-- CreateIndex
CREATE UNIQUE INDEX "comments_task_id_id_key" ON "comments"("task_id", "id");

-- CreateIndex
CREATE INDEX "comment_mentions_membership_id_idx" ON "comment_mentions"("membership_id");

-- CreateIndex
CREATE UNIQUE INDEX "comment_mentions_comment_id_membership_id_key" ON "comment_mentions"("comment_id", "membership_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_project_id_id_key" ON "api_keys"("project_id", "id");

-- AddForeignKey
ALTER TABLE "comments" ADD CONSTRAINT "comments_project_id_task_id_fkey" FOREIGN KEY ("project_id", "task_id") REFERENCES "tasks"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "comments" ADD CONSTRAINT "comments_project_id_author_key_id_fkey" FOREIGN KEY ("project_id", "author_key_id") REFERENCES "api_keys"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "comments" ADD CONSTRAINT "comments_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "comments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "comment_revisions" ADD CONSTRAINT "comment_revisions_comment_id_fkey" FOREIGN KEY ("comment_id") REFERENCES "comments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "comment_revisions" ADD CONSTRAINT "comment_revisions_author_key_id_fkey" FOREIGN KEY ("author_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "comment_mentions" ADD CONSTRAINT "comment_mentions_comment_id_fkey" FOREIGN KEY ("comment_id") REFERENCES "comments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "comment_mentions" ADD CONSTRAINT "comment_mentions_project_id_membership_id_fkey" FOREIGN KEY ("project_id", "membership_id") REFERENCES "memberships"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

