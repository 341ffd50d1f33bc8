-- AlterTable
ALTER TABLE "event_sequences" ADD COLUMN     "last_change_at" TIMESTAMPTZ(3);


-- A project's clock starts at its last event, so that no change made after this migration
-- gets an earlier time than one made before it.
UPDATE "event_sequences" s SET "last_change_at" = (SELECT max(e."occurred_at") FROM "events" e WHERE e."project_id" = s."project_id");
