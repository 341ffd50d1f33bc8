import { Prisma } from '../generated/prisma/client';
import { isoTimestamp } from '../common/dates';

/**
 * The JSON shape of a sprint, built by PostgreSQL from the sprint row `s`: the one definition
 * used by every sprint answer and by the events that carry a sprint.
 */
export const SPRINT_JSON = Prisma.raw(`json_build_object(
    'id', s.id,
    'name', s.name,
    'goal', s.goal,
    'status', s.status,
    'startDate', to_char(s.start_date, 'YYYY-MM-DD'),
    'endDate', to_char(s.end_date, 'YYYY-MM-DD'),
    'createdAt', ${isoTimestamp('s.created_at')}
  )`);
