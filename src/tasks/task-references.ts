import { HttpStatus } from '@nestjs/common';
import { notFound, Problem } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import type { PrismaTransaction } from '../database/prisma.service';

export interface TaskReferences {
  assigneeId?: string | null;
  sprintId?: string | null;
  labelIds?: string[];
  parentId?: string | null;
}

/**
 * Checks that what a task body refers to exists in the caller's project (404 otherwise,
 * whatever project it really belongs to), and locks it until the transaction ends, so
 * that a sprint cannot close or a parent go to the trash between this check and the write.
 * Null and absent references are not checked.
 */
export async function checkTaskReferences(tx: PrismaTransaction, projectId: string, references: TaskReferences): Promise<void> {
  const { assigneeId, sprintId, labelIds, parentId } = references;
  if (assigneeId != null) {
    const found = isUuid(assigneeId) && (await tx.membership.count({ where: { id: assigneeId, projectId } })) > 0;
    if (!found) throw notFound('Assignee');
  }
  if (sprintId != null) {
    const rows = isUuid(sprintId)
      ? await tx.$queryRaw<{ status: string }[]>`
          SELECT status::text FROM sprints WHERE id = ${sprintId}::uuid AND project_id = ${projectId}::uuid FOR SHARE`
      : [];
    // A closed sprint accepts no task: it answers as if it did not exist.
    if (rows.length === 0 || rows[0].status === 'closed') throw notFound('Sprint');
  }
  if (labelIds?.length) {
    const found = labelIds.every(isUuid) && (await tx.label.count({ where: { id: { in: labelIds }, projectId } })) === labelIds.length;
    if (!found) throw notFound('Label');
  }
  if (parentId != null) {
    const rows = isUuid(parentId)
      ? await tx.$queryRaw<{ parent_id: string | null }[]>`
          SELECT parent_id::text FROM tasks
           WHERE id = ${parentId}::uuid AND project_id = ${projectId}::uuid AND deleted_at IS NULL FOR SHARE`
      : [];
    if (rows.length === 0) throw notFound('Parent task');
    if (rows[0].parent_id !== null) {
      throw new Problem(HttpStatus.BAD_REQUEST, 'nesting_too_deep', 'parentId names a subtask: subtasks have one level only', [
        { field: 'parentId', message: 'must be a root task: subtasks have one level only' },
      ]);
    }
  }
}

/** labelIds is a set: duplicates collapse, and the order does not matter. */
export function labelSet(labelIds: string[]): string[] {
  return [...new Set(labelIds)].sort();
}
