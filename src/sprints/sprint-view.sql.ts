import { Prisma } from '../generated/prisma/client';
import { SPRINT_SQL } from './sprint-fields';

/**
 * The JSON shape of a sprint, built by PostgreSQL from the sprint row `s`: the fields
 * SPRINT_FIELDS shows, the one definition used by every sprint answer and by the events that
 * carry a sprint.
 */
export const SPRINT_JSON = Prisma.raw(`json_build_object(\n    ${SPRINT_SQL.jsonPairs('list').join(',\n    ')}\n  )`);
