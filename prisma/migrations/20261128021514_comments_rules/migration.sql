-- field rules: what the kinds of the field tables require of the database (src/common/fields/field-rules.ts),
-- written by npm run db:migration.
ALTER TABLE "comments" ADD CONSTRAINT "comments_body_not_blank" CHECK ("body" ~ '[^[:space:]]');
ALTER TABLE "comments" ADD CONSTRAINT "comments_author_name_min_length" CHECK (char_length("author_name") >= 1);
ALTER TABLE "comments" ADD CONSTRAINT "comments_revision_range" CHECK ("revision" >= 1 AND "revision" <= 2147483647);
