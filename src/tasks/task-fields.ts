import {
  asciiKey,
  calendarDate,
  decimal,
  fieldDecorator,
  fieldSql,
  FieldValues,
  id,
  instant,
  nothingOf,
  oneOf,
  reference,
  shownField,
  bodyField,
  TableOf,
  text,
  writableFields,
  WritableField,
  PatchableField,
} from '../common/fields/fields';
import type { Task } from '../generated/prisma/client';
import { SprintStatus, TaskPriority, TaskStatus } from '../generated/prisma/enums';

/** The fixed workflow, in order (interface specification, Task statuses). */
export const TASK_STATUSES = Object.values(TaskStatus);
export const TASK_PRIORITIES = Object.values(TaskPriority);
export const SPRINT_STATUSES = Object.values(SprintStatus);

/** `done` and `cancelled` count as finished: a finished blocker blocks nothing. */
export const FINISHED_STATUSES: readonly TaskStatus[] = [TaskStatus.done, TaskStatus.cancelled];

export { TaskPriority, TaskStatus };

/**
 * A task's fields, described once: one row per column of `tasks` (schema.prisma; TableOf fails
 * the build when a column has no row, or when its nullability differs). From it come the SQL of
 * the hot paths (the insert and update columns and values, the lock's SELECT, the plain fields of
 * the JSON view: task-view.sql.ts), the TypeScript shape of a task's fields (TaskFields), the
 * create defaults, the PATCH pick list, and the validation and OpenAPI properties of the DTOs
 * (@TaskBodyField, @TaskAnswerField in task.dto.ts). docs/extending.md: adding a field.
 *
 * Every row says who writes it (`write`: clients, or `'service'`) and where answers show it
 * (`shown`, or `{ not: why }`). Relations are hand-written where they are not a column's value
 * (TASK_RELATION_VIEWS, task-view.sql.ts): assigneeId and sprintId are shown as `assignee` and
 * `sprint` objects, labels and dependencies live in tables of their own (task-references.ts).
 */
export const TASK_FIELDS = {
  id: { column: 'id', kind: id(), write: 'service', shown: 'list' },
  projectId: { column: 'project_id', kind: id(), write: 'service', shown: 'list' },
  title: { column: 'title', kind: text(1, 200, { notBlank: true }), write: {}, shown: 'list' },
  description: { column: 'description', kind: text(0, 10_000), nullable: true, write: { default: null }, shown: 'detail' },
  status: { column: 'status', kind: oneOf(TASK_STATUSES, 'task_status'), write: { default: TaskStatus.backlog }, shown: 'list' },
  priority: { column: 'priority', kind: oneOf(TASK_PRIORITIES, 'task_priority'), write: { default: TaskPriority.none }, shown: 'list' },
  parentId: { column: 'parent_id', kind: reference(), nullable: true, write: { default: null, createOnly: true }, shown: 'list' },
  assigneeId: {
    column: 'assignee_id',
    kind: reference(),
    nullable: true,
    write: { default: null },
    shown: { not: 'shown as `assignee` (TASK_RELATION_VIEWS)' },
  },
  sprintId: {
    column: 'sprint_id',
    kind: reference(),
    nullable: true,
    write: { default: null },
    shown: { not: 'shown as `sprint` (TASK_RELATION_VIEWS)' },
  },
  dueDate: { column: 'due_date', kind: calendarDate(), nullable: true, write: { default: null }, shown: 'list' },
  completedAt: { column: 'completed_at', kind: instant(), nullable: true, write: 'service', shown: 'list' },
  createdAt: { column: 'created_at', kind: instant(), write: 'service', shown: 'list' },
  updatedAt: { column: 'updated_at', kind: instant(), write: 'service', shown: 'list' },
  deletedAt: { column: 'deleted_at', kind: instant(), nullable: true, write: 'service', shown: 'trash' },
  trashedWithId: {
    column: 'trashed_with_id',
    kind: id(),
    nullable: true,
    write: 'service',
    shown: { not: 'which DELETE sent the task to the trash: the service’s own bookkeeping' },
  },
  estimate: { column: 'estimate', kind: decimal(0, 1000, 1), nullable: true, write: { default: null }, shown: 'list' },
  // Written at creation and by moves (task-ranks.ts).
  rank: { column: 'rank', kind: asciiKey(64), write: 'service', shown: 'list' },
} as const satisfies TableOf<Task>;

export type TaskField = keyof typeof TASK_FIELDS;

/** The SQL derived from TASK_FIELDS, on the task row `t`. */
export const TASK_SQL = fieldSql(TASK_FIELDS, 't');

/** The fields clients write (on create), and those a PATCH may change. */
export const TASK_WRITABLE = writableFields(TASK_FIELDS);

/** A task's written fields as the API names and writes them, its label set included (history compares these). */
export type TaskFields = FieldValues<typeof TASK_FIELDS, WritableField<typeof TASK_FIELDS>> & { labelIds: string[] };

/** The fields a PATCH may change. */
export type PatchableTaskFields = FieldValues<typeof TASK_FIELDS, PatchableField<typeof TASK_FIELDS>> & { labelIds: string[] };

/** What a created entry's changes start from: every field unset, no label. */
export const NO_TASK_FIELDS: Record<keyof TaskFields, unknown> = { ...nothingOf(TASK_FIELDS), labelIds: [] };

/** On a request DTO's property: the validation and OpenAPI property of its TASK_FIELDS row. */
export const TaskBodyField = fieldDecorator(TASK_FIELDS, bodyField, 'TaskBodyField');

/** On an answer DTO's property: the OpenAPI property of its TASK_FIELDS row. */
export const TaskAnswerField = fieldDecorator(TASK_FIELDS, shownField, 'TaskAnswerField');
