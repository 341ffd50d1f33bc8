import { Prisma } from '../generated/prisma/client';
import { isoTimestamp } from '../common/dates';

/** A webhook as the API shows it (never its secret), built by PostgreSQL from the row `w`: the one definition. */
export const WEBHOOK_JSON = Prisma.raw(`json_build_object(
    'id', w.id,
    'url', w.url,
    'events', to_json(w.events),
    'description', w.description,
    'enabled', w.enabled,
    'createdAt', ${isoTimestamp('w.created_at')}
  )`);

/**
 * A delivery as its log shows it, from the row `d` and its event `e`. `nextAttemptAt` only while
 * it is pending (afterwards the column keeps no meaning).
 */
export const DELIVERY_JSON = Prisma.raw(`json_build_object(
    'id', d.id,
    'eventId', d.event_id,
    'eventType', e.type,
    'status', d.status,
    'attempts', d.attempts,
    'lastAttemptAt', ${isoTimestamp('d.last_attempt_at')},
    'nextAttemptAt', CASE WHEN d.status = 'pending' THEN ${isoTimestamp('d.next_attempt_at')} END,
    'responseStatus', d.response_status,
    'error', d.error
  )`);
