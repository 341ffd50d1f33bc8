import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';

/**
 * The extensions the migrations create, which an embedded PGlite must load to open the database:
 * pg_trgm (the title substring index), unaccent (the search document, migration `task_search`),
 * btree_gin (the search index keyed by project, migration `task_search_project_index`).
 * Every PGlite of the service, of the Prisma CLI and of the bench opens with these.
 */
export const PGLITE_EXTENSIONS = { btree_gin, pg_trgm, unaccent };
