-- hand-written: the rules of attachments (decisions.md section 24) that schema.prisma and the
-- field kinds cannot say, and the permission of section 24 among the known ones.

-- A name has no / \ or control characters (C0, DEL, C1); sha256 is lower-case hex.
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_name_plain" CHECK ("name" !~ '[/\\[:cntrl:]\u0080-\u009f]');
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_sha256_hex" CHECK ("sha256" ~ '^[0-9a-f]{64}$');

-- Keys may now hold attachments:write (decisions.md section 24).
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_known_permissions";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_known_permissions"
  CHECK ("permissions" <@ ARRAY['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage', 'webhooks:manage', 'comments:write', 'content:moderate', 'attachments:write']::TEXT[]);
