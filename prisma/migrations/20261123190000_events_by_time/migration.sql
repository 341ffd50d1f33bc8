-- CreateIndex
CREATE INDEX "events_occurred_at_idx" ON "events"("occurred_at");

