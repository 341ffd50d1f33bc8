import type { Sql } from '../database/sql';

/** The `error` of the pending deliveries of a webhook that is disabled. */
export const WEBHOOK_DISABLED_ERROR = 'not sent: the webhook was disabled';

/**
 * A webhook disabled (by PATCH, by DELETE, or after days of failures) delivers nothing more:
 * its pending deliveries fail, and can be redelivered once it is enabled again. Answers how many.
 */
export function closePendingDeliveries(db: Sql, webhookIds: string[]): Promise<number> {
  return db.$executeRaw`
    UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, error = ${WEBHOOK_DISABLED_ERROR}
     WHERE webhook_id = ANY(${webhookIds}::uuid[]) AND status = 'pending'`;
}
