-- hand-written: the permission of decisions.md section 24 among the known ones. (A name's
-- characters and sha256's hex are checked by the service only: a CHECK on a field-table column
-- must derive from its kind, and no kind says them yet.)

-- Keys may now hold attachments:write (decisions.md section 24).
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_known_permissions";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_known_permissions"
  CHECK ("permissions" <@ ARRAY['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage', 'webhooks:manage', 'comments:write', 'content:moderate', 'attachments:write']::TEXT[]);
