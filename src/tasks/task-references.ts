import { HttpStatus } from '@nestjs/common';
import { Problem } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import type { SqlTransaction } from '../database/sql';

export interface TaskReferences {
  assigneeId?: string | null;
  sprintId?: string | null;
  labelIds?: string[];
  parentId?: string | null;
}

/** How a field of the `index`th body is named in errors: `sprintId`, or `tasks[3].sprintId` in a bulk create. */
export type FieldName = (index: number, field: keyof TaskReferences) => string;

const OWN_NAME: FieldName = (_index, field) => field;

interface Found {
  assignees: string[];
  /** sprint id: status */
  sprints: Record<string, string>;
  labels: string[];
  /** live task id: its parent id (null for a root task) */
  parents: Record<string, string | null>;
}

/**
 * Checks that what task bodies refer to exists in the caller's project (404 otherwise,
 * whatever project it really belongs to), and locks the sprints and parents until the
 * transaction ends, so that a sprint cannot close or a parent go to the trash between this
 * check and the write. Null and absent references are not checked. One statement for all of
 * them, however many bodies: a create pays one round trip, not one per reference.
 *
 * A 400 wins over any 404 (decisions.md section 1): a parent that is itself a subtask in any
 * body first; then, body by body, the first reference that is not there.
 */
export async function checkTaskReferences(
  tx: SqlTransaction,
  projectId: string,
  bodies: TaskReferences[],
  name: FieldName = OWN_NAME,
): Promise<void> {
  const wanted = (pick: (body: TaskReferences) => (string | null | undefined)[]) => [
    ...new Set(bodies.flatMap(pick).filter((id): id is string => typeof id === 'string' && isUuid(id))),
  ];
  const assignees = wanted((body) => [body.assigneeId]);
  const sprints = wanted((body) => [body.sprintId]);
  const labels = wanted((body) => body.labelIds ?? []);
  const parents = wanted((body) => [body.parentId]);
  const found: Found =
    assignees.length + sprints.length + labels.length + parents.length === 0
      ? { assignees: [], sprints: {}, labels: [], parents: {} }
      : (
          await tx.$queryRaw<Found[]>`
            SELECT ARRAY(SELECT id::text FROM memberships WHERE id = ANY(${assignees}::uuid[]) AND project_id = ${projectId}::uuid) AS assignees,
                   (SELECT COALESCE(json_object_agg(s.id, s.status), '{}'::json) FROM (
                      SELECT id, status FROM sprints WHERE id = ANY(${sprints}::uuid[]) AND project_id = ${projectId}::uuid FOR SHARE) s) AS sprints,
                   ARRAY(SELECT id::text FROM labels WHERE id = ANY(${labels}::uuid[]) AND project_id = ${projectId}::uuid) AS labels,
                   (SELECT COALESCE(json_object_agg(p.id, p.parent_id), '{}'::json) FROM (
                      SELECT id, parent_id FROM tasks
                       WHERE id = ANY(${parents}::uuid[]) AND project_id = ${projectId}::uuid AND deleted_at IS NULL FOR SHARE) p) AS parents`
        )[0];

  bodies.forEach((body, index) => {
    if (body.parentId != null && typeof found.parents[body.parentId] === 'string') {
      throw new Problem(HttpStatus.BAD_REQUEST, 'nesting_too_deep', 'parentId names a subtask: subtasks have one level only', [
        { field: name(index, 'parentId'), message: 'must be a root task: subtasks have one level only' },
      ]);
    }
  });
  const assigneeSet = new Set(found.assignees);
  const labelSetFound = new Set(found.labels);
  bodies.forEach((body, index) => {
    const missing = (field: keyof TaskReferences, what: string, message: string) =>
      new Problem(HttpStatus.NOT_FOUND, 'not_found', `${what} not found`, [{ field: name(index, field), message }]);
    if (body.assigneeId != null && !assigneeSet.has(body.assigneeId)) throw missing('assigneeId', 'Assignee', 'is not a member of this project');
    // A closed sprint accepts no task: it answers as if it did not exist.
    const sprintStatus = body.sprintId != null ? found.sprints[body.sprintId] : undefined;
    if (body.sprintId != null && (sprintStatus === undefined || sprintStatus === 'closed')) {
      throw missing('sprintId', 'Sprint', 'is not a sprint of this project that accepts tasks');
    }
    if (body.labelIds?.some((id) => !labelSetFound.has(id))) throw missing('labelIds', 'Label', 'names a label that is not in this project');
    if (body.parentId != null && !(body.parentId in found.parents)) throw missing('parentId', 'Parent task', 'is not a live task of this project');
  });
}

/** labelIds is a set: duplicates collapse, and the order does not matter. */
export function labelSet(labelIds: string[]): string[] {
  return [...new Set(labelIds)].sort();
}
