-- field rules: what the kinds of the field tables require of the database (src/common/fields/field-rules.ts),
-- written by npm run db:migration.
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_name_min_length" CHECK (char_length("name") >= 1);
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_size_range" CHECK ("size" >= 1 AND "size" <= 2147483647);
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_content_type_ascii" CHECK ("content_type" ~ '^[!-~]{1,255}$');
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_sha256_ascii" CHECK ("sha256" ~ '^[!-~]{1,64}$');
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_author_name_min_length" CHECK (char_length("author_name") >= 1);
