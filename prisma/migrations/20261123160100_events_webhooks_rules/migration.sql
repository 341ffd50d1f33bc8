-- hand-written: rules of events, webhooks and idempotent requests that schema.prisma cannot say.

-- The webhook worker claims due deliveries in due order: only pending ones are ever due.
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries"("next_attempt_at") WHERE "status" = 'pending';

ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_known_status"
  CHECK ("status" IN ('pending', 'succeeded', 'failed'));
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_attempts_not_negative" CHECK ("attempts" >= 0);
ALTER TABLE "events" ADD CONSTRAINT "events_sequence_positive" CHECK ("sequence" > 0);
ALTER TABLE "idempotent_requests" ADD CONSTRAINT "idempotent_requests_success_only" CHECK ("status" BETWEEN 200 AND 299);

-- Keys may now hold webhooks:manage (decisions.md section 14).
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_known_permissions";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_known_permissions"
  CHECK ("permissions" <@ ARRAY['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage', 'webhooks:manage']::TEXT[]);
