import { Prisma } from '../generated/prisma/client';
import { isoTimestamp } from '../common/dates';

/**
 * The JSON shape of an event, built by PostgreSQL from the event row `e`: the one definition
 * used by the change feed and by webhook deliveries, which send the same bytes.
 */
export const EVENT_JSON = Prisma.raw(`json_build_object(
    'id', e.id,
    'sequence', e.sequence,
    'type', e.type,
    'occurredAt', ${isoTimestamp('e.occurred_at')},
    'actor', e.actor,
    'data', e.data
  )`);
