import { HttpStatus } from '@nestjs/common';
import { Problem } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import { lockSprints, lockTasks } from '../changes/locks';
import { Prisma } from '../generated/prisma/client';

export interface TaskReferences {
  assigneeId?: string | null;
  sprintId?: string | null;
  labelIds?: string[];
  parentId?: string | null;
}

/** How a field of the `index`th body is named in errors: `sprintId`, or `tasks[3].sprintId` in a bulk create. */
export type FieldName = (index: number, field: keyof TaskReferences) => string;

const OWN_NAME: FieldName = (_index, field) => field;

/** What referenceLocks' first statement answers. */
interface Found {
  assignees: string[];
  /** sprint id: status */
  sprints: Record<string, string>;
  labels: string[];
}

/**
 * The statements that lock and read what task bodies refer to in the caller's project, to send
 * first in a write's lock pipeline (none when the bodies refer to nothing): the sprints they name
 * (FOR SHARE, so that a sprint cannot close or go between this check and the write), their
 * assignees and labels, then their parents (FOR SHARE, so that a parent cannot go to the trash):
 * sprints before tasks, as the lock order wants (src/changes/locks.ts). Null and absent
 * references are not checked. One statement, and a second when a body names a parent, however
 * many bodies: one round trip with the rest of the pipeline. assertReferences checks their answers.
 */
export function referenceLocks(projectId: string, bodies: TaskReferences[]): Prisma.Sql[] {
  const wanted = (pick: (body: TaskReferences) => (string | null | undefined)[]) => [
    ...new Set(bodies.flatMap(pick).filter((id): id is string => typeof id === 'string' && isUuid(id))),
  ];
  const assignees = wanted((body) => [body.assigneeId]);
  const sprints = wanted((body) => [body.sprintId]);
  const labels = wanted((body) => body.labelIds ?? []);
  const parents = wanted((body) => [body.parentId]);
  if (assignees.length + sprints.length + labels.length + parents.length === 0) return [];
  const found = Prisma.sql`
      SELECT ARRAY(SELECT id::text FROM memberships WHERE id = ANY(${assignees}::uuid[]) AND project_id = ${projectId}::uuid) AS assignees,
             (SELECT COALESCE(json_object_agg(s.id, s.status), '{}'::json)
                FROM (${lockSprints(Prisma.sql`s.id = ANY(${sprints}::uuid[]) AND s.project_id = ${projectId}::uuid`, 'FOR SHARE')}) s) AS sprints,
             ARRAY(SELECT id::text FROM labels WHERE id = ANY(${labels}::uuid[]) AND project_id = ${projectId}::uuid) AS labels`;
  if (parents.length === 0) return [found];
  return [
    found,
    lockTasks(
      projectId,
      Prisma.sql`t.id = ANY(${parents}::uuid[]) AND t.deleted_at IS NULL`,
      'FOR SHARE',
      Prisma.sql`t.id::text, t.parent_id::text AS "parentId"`,
    ),
  ];
}

/**
 * Checks what referenceLocks read (`answers`: the rows its statements answered, in order, or
 * none when it gave no statement): 404
 * for a reference that is not in the caller's project, whatever project it really belongs to.
 *
 * A 400 wins over any 404 (decisions.md section 1): a parent that is itself a subtask in any
 * body first; then, body by body, the first reference that is not there.
 */
export function assertReferences(answers: unknown[][], bodies: TaskReferences[], name: FieldName = OWN_NAME): void {
  // No statements: no reference was a UUID, so none names anything here.
  const [[found], parentRows = []] = (answers.length > 0 ? answers : [[{ assignees: [], sprints: {}, labels: [] }]]) as [
    Found[],
    { id: string; parentId: string | null }[]?,
  ];
  const parents = new Map(parentRows.map((row) => [row.id, row.parentId]));

  bodies.forEach((body, index) => {
    if (body.parentId != null && typeof parents.get(body.parentId) === 'string') {
      throw new Problem(HttpStatus.BAD_REQUEST, 'nesting_too_deep', 'parentId names a subtask: subtasks have one level only', [
        { field: name(index, 'parentId'), message: 'must be a root task: subtasks have one level only' },
      ]);
    }
  });
  const assigneeSet = new Set(found.assignees);
  const labelSetFound = new Set(found.labels);
  bodies.forEach((body, index) => {
    const missing = (field: keyof TaskReferences, sent: string[]) => referenceNotFound(field, name(index, field), sent);
    if (body.assigneeId != null && !assigneeSet.has(body.assigneeId)) throw missing('assigneeId', [body.assigneeId]);
    // A closed sprint accepts no task: it answers as if it did not exist.
    const sprintStatus = body.sprintId != null ? found.sprints[body.sprintId] : undefined;
    if (body.sprintId != null && (sprintStatus === undefined || sprintStatus === 'closed')) throw missing('sprintId', [body.sprintId]);
    if (body.labelIds?.some((id) => !labelSetFound.has(id)))
      throw missing(
        'labelIds',
        body.labelIds.filter((id) => !labelSetFound.has(id)),
      );
    if (body.parentId != null && !parents.has(body.parentId)) throw missing('parentId', [body.parentId]);
  });
}

/**
 * What each reference a body may hold names, and where a client finds one (decisions.md section
 * 26): one table for every 404 of a reference, with or without the shape of an id.
 */
const REFERENCES = {
  assigneeId: {
    what: 'Assignee',
    missing: 'is not a member of this project',
    expects: 'the membershipId (a UUID) of a member of this project',
    list: 'GET /api/v1/members',
  },
  sprintId: {
    what: 'Sprint',
    missing: 'is not a sprint of this project that accepts tasks',
    expects: 'the id (a UUID) of a sprint of this project that is not closed',
    list: 'GET /api/v1/sprints',
  },
  labelIds: {
    what: 'Label',
    missing: 'names a label that is not in this project',
    expects: 'the ids (UUIDs) of labels of this project',
    list: 'GET /api/v1/labels',
  },
  parentId: {
    what: 'Parent task',
    missing: 'is not a live task of this project',
    expects: 'the id (a UUID) of a live root task of this project',
    list: 'GET /api/v1/tasks',
  },
  task: {
    what: 'Task',
    missing: 'is not a live task of this project',
    expects: 'the id (a UUID) of a live task of this project',
    list: 'GET /api/v1/tasks',
  },
  commentParentId: {
    what: 'Comment to reply to',
    missing: 'is not a comment of this task (or it was deleted)',
    expects: 'the id (a UUID) of a top-level comment of this task',
    list: 'GET /api/v1/tasks/{taskId}/comments',
  },
  moveOpenTasksTo: {
    what: 'Sprint to move the open tasks to',
    missing: 'is not a sprint of this project',
    expects: 'the id (a UUID) of a planned sprint of the same project',
    list: 'GET /api/v1/sprints',
  },
} as const;

/**
 * The 404 of a reference (`kind`) that names nothing in the project, `field` as the API names it
 * (`tasks[2].sprintId`), `sent` the ids it names that are not there: a value that is not even an id
 * (`assigneeId: "Ada"`) is told what the field expects; every one is told where to find one. Still
 * a 404, as an id of another project is (the specification's rule 2; ids are opaque strings there).
 */
export function referenceNotFound(kind: keyof typeof REFERENCES, field: string, sent: string[]): Problem {
  const reference = REFERENCES[kind];
  const shapeless = sent.filter((id) => !isUuid(id));
  const message = shapeless.some((id) => isUuid(id.toLowerCase()))
    ? `is not an id: ids are in lower case, as the service issues them; it expects ${reference.expects}, which ${reference.list} lists`
    : shapeless.length
      ? `is not an id: it expects ${reference.expects}, which ${reference.list} lists`
      : `${reference.missing}; ${reference.list} lists them`;
  return new Problem(HttpStatus.NOT_FOUND, 'not_found', `${reference.what} not found: ${field} ${message}`, [{ field, message }]);
}

/** labelIds is a set: duplicates collapse, and the order does not matter. */
export function labelSet(labelIds: string[]): string[] {
  return [...new Set(labelIds)].sort();
}
