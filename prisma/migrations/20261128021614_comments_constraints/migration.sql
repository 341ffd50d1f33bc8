-- hand-written: the rules of comments (decisions.md section 23) that schema.prisma cannot say,
-- and the permissions of section 23 among the known ones.

-- A reply's parent is a comment of the same task: this composite key sits beside Prisma's
-- single-column one (MATCH SIMPLE skips it for a top-level comment).
ALTER TABLE "comments" ADD CONSTRAINT "comments_same_task_parent_fkey"
  FOREIGN KEY ("task_id", "parent_id") REFERENCES "comments"("task_id", "id") ON DELETE CASCADE;
ALTER TABLE "comments" ADD CONSTRAINT "comments_not_own_parent" CHECK ("parent_id" IS NULL OR "parent_id" <> "id");

-- A tombstone (deleted_at set) keeps no text, and every other comment has one; only a
-- top-level comment stays as a tombstone (a deleted reply is destroyed).
ALTER TABLE "comments" ADD CONSTRAINT "comments_text_unless_tombstone" CHECK (("body" IS NULL) = ("deleted_at" IS NOT NULL));
ALTER TABLE "comments" ADD CONSTRAINT "comments_tombstone_top_level" CHECK ("deleted_at" IS NULL OR "parent_id" IS NULL);

-- Revisions hold texts as comments do (the rule of comments_body_not_blank), numbered from 1.
ALTER TABLE "comment_revisions" ADD CONSTRAINT "comment_revisions_number_positive" CHECK ("number" >= 1);
ALTER TABLE "comment_revisions" ADD CONSTRAINT "comment_revisions_body_not_blank" CHECK ("body" ~ '[^[:space:]]');
ALTER TABLE "comment_revisions" ADD CONSTRAINT "comment_revisions_author_name_min_length" CHECK (char_length("author_name") >= 1);

-- At most 50 members are mentioned in one comment, numbered from 1 in order of first appearance.
ALTER TABLE "comment_mentions" ADD CONSTRAINT "comment_mentions_position_range" CHECK ("position" BETWEEN 1 AND 50);

-- Keys may now hold comments:write and content:moderate (decisions.md sections 2 and 23).
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_known_permissions";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_known_permissions"
  CHECK ("permissions" <@ ARRAY['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage', 'webhooks:manage', 'comments:write', 'content:moderate']::TEXT[]);
