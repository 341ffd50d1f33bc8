import { HttpStatus } from '@nestjs/common';
import { notFound, Problem } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import type { SqlTransaction } from '../database/sql-transaction';
import { Prisma } from '../generated/prisma/client';

export interface TaskReferences {
  assigneeId?: string | null;
  sprintId?: string | null;
  labelIds?: string[];
  parentId?: string | null;
}

/**
 * Checks that what a task body refers to exists in the caller's project (404 otherwise,
 * whatever project it really belongs to), and locks the sprint and the parent until the
 * transaction ends, so that a sprint cannot close or a parent go to the trash between this
 * check and the write. Null and absent references are not checked. One statement for all
 * of them: a create or update pays one round trip, not one per reference.
 */
export async function checkTaskReferences(tx: SqlTransaction, projectId: string, references: TaskReferences): Promise<void> {
  const { assigneeId, sprintId, labelIds, parentId } = references;
  const checks: Prisma.Sql[] = [];
  if (assigneeId != null) {
    checks.push(
      isUuid(assigneeId)
        ? Prisma.sql`EXISTS (SELECT 1 FROM memberships WHERE id = ${assigneeId}::uuid AND project_id = ${projectId}::uuid) AS assignee`
        : Prisma.sql`false AS assignee`,
    );
  }
  if (sprintId != null) {
    checks.push(
      isUuid(sprintId)
        ? Prisma.sql`(SELECT status::text FROM sprints WHERE id = ${sprintId}::uuid AND project_id = ${projectId}::uuid FOR SHARE) AS sprint_status`
        : Prisma.sql`NULL::text AS sprint_status`,
    );
  }
  if (labelIds?.length) {
    checks.push(
      labelIds.every(isUuid)
        ? Prisma.sql`(SELECT count(*)::int FROM labels WHERE id = ANY(${labelIds}::uuid[]) AND project_id = ${projectId}::uuid) AS labels_found`
        : Prisma.sql`0 AS labels_found`,
    );
  }
  if (parentId != null) {
    // [] when there is no such live task; [null] for a root task; [id] for a subtask.
    checks.push(
      isUuid(parentId)
        ? Prisma.sql`ARRAY(SELECT parent_id::text FROM tasks
                            WHERE id = ${parentId}::uuid AND project_id = ${projectId}::uuid AND deleted_at IS NULL FOR SHARE) AS parent`
        : Prisma.sql`ARRAY[]::text[] AS parent`,
    );
  }
  if (checks.length === 0) return;
  const [found] = await tx.$queryRaw<{ assignee?: boolean; sprint_status?: string | null; labels_found?: number; parent?: (string | null)[] }[]>`
    SELECT ${Prisma.join(checks)}`;

  // A 400 wins over any 404 (decisions.md section 1): a parent that is itself a subtask first.
  if (parentId != null && found.parent?.length && found.parent[0] !== null) {
    throw new Problem(HttpStatus.BAD_REQUEST, 'nesting_too_deep', 'parentId names a subtask: subtasks have one level only', [
      { field: 'parentId', message: 'must be a root task: subtasks have one level only' },
    ]);
  }
  if (assigneeId != null && !found.assignee) throw notFound('Assignee');
  // A closed sprint accepts no task: it answers as if it did not exist.
  if (sprintId != null && (found.sprint_status == null || found.sprint_status === 'closed')) throw notFound('Sprint');
  if (labelIds?.length && found.labels_found !== labelIds.length) throw notFound('Label');
  if (parentId != null && !found.parent?.length) throw notFound('Parent task');
}

/** labelIds is a set: duplicates collapse, and the order does not matter. */
export function labelSet(labelIds: string[]): string[] {
  return [...new Set(labelIds)].sort();
}
