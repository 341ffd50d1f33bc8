import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';

/**
 * The extensions the migrations create, which an embedded PGlite must load to open the database:
 * pg_trgm (the title substring index), unaccent (the search document, migration `task_search`).
 * Every PGlite of the service and of the Prisma CLI opens with these.
 */
export const PGLITE_EXTENSIONS = { pg_trgm, unaccent };
