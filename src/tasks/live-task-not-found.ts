import { HttpStatus } from '@nestjs/common';
import { Problem } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import { statement, type Sql } from '../database/sql';
import { Prisma } from '../generated/prisma/client';

/** The route that brings a task back from the trash, as the 404 of a live-task endpoint names it. */
const RESTORE_ROUTE = 'POST /api/v1/trash/{taskId}/restore';

/**
 * The 404 of a live-task endpoint (detail, PATCH, DELETE, move, dependencies, history, and any
 * route about a live task) when `taskIds` (the tasks it asked for, in order) are not all live:
 * still 404 not_found, but when one of them is in the project's trash the problem says so
 * (`inTrash: true`) and names the route that restores it, or that of its parent first when the
 * parent is in the trash too (decisions.md section 26). Every key can read a trashed task
 * (GET /api/v1/trash), so every key is told. `what` names a plain 404.
 *
 * Call it on the 404 path only, where it reads the tasks' rows once; through `db`, the request's
 * transaction when it is in one (PGlite runs one transaction at a time: a read outside it would
 * wait for it for ever).
 */
export async function liveTaskNotFound(db: Sql, projectId: string, taskIds: string | string[], what = 'Task'): Promise<Problem> {
  const ids = (Array.isArray(taskIds) ? taskIds : [taskIds]).filter(isUuid);
  const trashed =
    ids.length === 0
      ? []
      : await db.rows(
          statement<{ id: string; trashedParentId: string | null }>(Prisma.sql`
            SELECT t.id::text AS id, p.id::text AS "trashedParentId" FROM tasks t
              LEFT JOIN tasks p ON p.id = t.parent_id AND p.deleted_at IS NOT NULL
             WHERE t.project_id = ${projectId}::uuid AND t.id = ANY(${ids}::uuid[]) AND t.deleted_at IS NOT NULL`),
        );
  const inTrash = ids.map((id) => trashed.find((row) => row.id === id)).find((row) => row !== undefined);
  if (inTrash === undefined) return new Problem(HttpStatus.NOT_FOUND, 'not_found', `${what} not found`);
  const { id, trashedParentId: parentId } = inTrash;
  // A subtask cannot be restored before its parent (409): name the parent's restore, which brings back what went with it.
  const detail =
    parentId === null
      ? `Task ${id} is in the trash: restore it with ${RESTORE_ROUTE} (here POST /api/v1/trash/${id}/restore, with the tasks:delete permission), ` +
        'or find it in GET /api/v1/trash'
      : `Task ${id} is in the trash, and so is its parent task ${parentId}: restore the parent first with ${RESTORE_ROUTE} ` +
        `(here POST /api/v1/trash/${parentId}/restore, with the tasks:delete permission), which brings this one back if they went to the trash ` +
        `together (else restore it next: POST /api/v1/trash/${id}/restore), or find them in GET /api/v1/trash`;
  return new Problem(HttpStatus.NOT_FOUND, 'not_found', detail, undefined, { inTrash: true });
}
