import { ApiHideProperty, ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { PatchableField, requireFieldDecorators, SameKeys, ShownField, shownFields, WritableField } from '../common/fields/fields';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, ValidateNested } from 'class-validator';
import { SearchedPageQueryDto } from '../common/pagination/page.dto';
import {
  IsCalendarDate,
  IsCommaSeparatedListOf,
  IsInstant,
  IsText,
  OnlyWith,
  OptionalButNotNull,
  ReadOnlyField,
} from '../common/validation/validators';
import { LabelDto, MemberDto } from '../projects/project-resources.dto';
import { FILTER_DESCRIPTION } from './finding/filter-fields';
import {
  SPRINT_STATUSES,
  TASK_FIELDS,
  TASK_PRIORITIES,
  TASK_STATUSES,
  TASK_WRITABLE,
  TaskAnswerField,
  TaskBodyField,
  TaskFields,
  TaskPriority,
  TaskStatus,
} from './task-fields';
import type { ShownRelation } from './task-view.sql';

// ---- What clients send ----

/** `todo,done`: one or more of `values`, comma-separated, as IsCommaSeparatedListOf accepts them. */
function commaSeparatedListOf(values: readonly string[]): string {
  return `^(${values.join('|')})(,(${values.join('|')}))*$`;
}

export class CreateTaskDto {
  /** 1 to 200 characters (code points), not only white space. */
  @TaskBodyField()
  @ApiProperty({ example: 'Write the release notes' })
  title: string;

  /** Markdown, up to 10 000 characters. */
  @TaskBodyField()
  @ApiPropertyOptional({ example: 'List every **breaking** change.' })
  description?: string | null;

  /** Entering `done` sets `completedAt` (creating a task in `done` too); leaving `done` clears it. */
  @TaskBodyField()
  status?: TaskStatus;

  @TaskBodyField()
  priority?: TaskPriority;

  /** A membershipId of the project (GET /api/v1/members); null for nobody. */
  @TaskBodyField()
  assigneeId?: string | null;

  /** Label ids of the project (GET /api/v1/labels), a set: duplicates collapse. */
  @OptionalButNotNull()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @ApiPropertyOptional({ type: 'array', items: { type: 'string', format: 'uuid' }, maxItems: 100 })
  labelIds?: string[];

  /** A live root task of the project: subtasks have one level only. Cannot be changed later. */
  @TaskBodyField()
  parentId?: string | null;

  /** A sprint of the project that is not closed; null for none. */
  @TaskBodyField()
  sprintId?: string | null;

  /** YYYY-MM-DD, a civil day in Madrid; null for none. */
  @TaskBodyField()
  @ApiPropertyOptional({ example: '2026-12-24' })
  dueDate?: string | null;

  /** Points, 0 to 1000 with at most one decimal place (0.5, 3, 13); null: not estimated. */
  @TaskBodyField()
  estimate?: number | null;

  /** Read-only: a new task goes to the bottom; POST /api/v1/tasks/{taskId}/move places it. */
  @ApiHideProperty()
  @ReadOnlyField()
  rank?: never;
}

/** Shown fields that a body may not send: 400 read_only_field rather than unknown_field. */
type ReadOnlyInBodies = 'rank';

// The body fields are exactly TASK_FIELDS' written ones (and the label set), with their types:
// a row without its property, or a property without its row, fails the build.
const _createTaskBodyHasEveryField: SameKeys<
  keyof CreateTaskDto,
  WritableField<typeof TASK_FIELDS> | 'labelIds' | ReadOnlyInBodies,
  'CreateTaskDto'
> = true;
const _createTaskBodyTypes: Required<Omit<CreateTaskDto, ReadOnlyInBodies>> extends TaskFields ? true : false = true;

/** Up to 100 tasks created at once, all or none (decisions.md section 16). */
export class BulkCreateTasksDto {
  /** 1 to 100 task bodies, each as POST /api/v1/tasks takes it; errors name them `tasks[3].title`. */
  @IsArray()
  @ArrayMinSize(1, { message: 'must hold 1 to 100 tasks' })
  @ArrayMaxSize(100, { message: 'must hold 1 to 100 tasks' })
  @ValidateNested({ each: true, message: 'must be a task body: a JSON object, as POST /api/v1/tasks takes it' })
  @Type(() => CreateTaskDto)
  tasks: CreateTaskDto[];
}

/** The fields a PATCH may not change (TASK_FIELDS' createOnly rows): read-only there. */
const CREATE_ONLY_TASK_FIELDS = ['parentId'] as const satisfies readonly Exclude<
  WritableField<typeof TASK_FIELDS>,
  PatchableField<typeof TASK_FIELDS>
>[];
const _createOnlyListed: SameKeys<
  (typeof CREATE_ONLY_TASK_FIELDS)[number],
  Exclude<WritableField<typeof TASK_FIELDS>, PatchableField<typeof TASK_FIELDS>>,
  'CREATE_ONLY_TASK_FIELDS'
> = true;

/**
 * A partial update: absent fields stay, an explicit null clears (description, assigneeId,
 * sprintId, dueDate). Null is not accepted where nothing can be cleared (title, status,
 * priority, labelIds). `parentId` is read-only here.
 */
export class UpdateTaskDto extends PartialType(OmitType(CreateTaskDto, [...CREATE_ONLY_TASK_FIELDS, 'rank'] as const), {
  skipNullProperties: false,
}) {
  @ApiHideProperty()
  @ReadOnlyField()
  parentId?: never;

  // Declared again, not inherited: PartialType would let null through.
  @ApiHideProperty()
  @ReadOnlyField()
  rank?: never;
}

/** Request examples in the OpenAPI document: valid as they are in any project (they name no ids). */
export const CREATE_TASK_EXAMPLE: CreateTaskDto = {
  title: 'Write the release notes',
  description: 'List every **breaking** change.',
  status: 'todo',
  priority: 'high',
  dueDate: '2026-12-24',
};
export const UPDATE_TASK_EXAMPLE: UpdateTaskDto = { status: 'in_progress', dueDate: null };
export const BULK_CREATE_TASKS_EXAMPLE: BulkCreateTasksDto = {
  tasks: [
    { title: 'Write the release notes', priority: 'high' },
    { title: 'Announce the release', dueDate: '2026-12-24' },
    { title: 'Archive the old builds' },
  ],
};

/**
 * The task list's filters. Query parameters carry no `example`: Swagger UI's "Try it out" fills it
 * in, and the first Execute would filter the list down to nothing. Their descriptions give examples.
 */
export class ListTasksQueryDto extends SearchedPageQueryDto {
  /** Comma-separated statuses to include: backlog, planning, todo, in_progress, in_review, done, cancelled (e.g. `todo,in_progress`). */
  @IsOptional()
  @IsCommaSeparatedListOf(TASK_STATUSES)
  @ApiPropertyOptional({ pattern: commaSeparatedListOf(TASK_STATUSES) })
  status?: string;

  /** Comma-separated priorities to include: urgent, high, medium, low, none (e.g. `urgent,high`). */
  @IsOptional()
  @IsCommaSeparatedListOf(TASK_PRIORITIES)
  @ApiPropertyOptional({ pattern: commaSeparatedListOf(TASK_PRIORITIES) })
  priority?: string;

  /** A membershipId (a uuid, GET /api/v1/members), or `none` for tasks without assignee. */
  @IsOptional()
  @IsString()
  assigneeId?: string;

  /** A sprint id (a uuid), or `none` for tasks without sprint. */
  @IsOptional()
  @IsString()
  sprintId?: string;

  /** Tasks carrying this label. */
  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ format: 'uuid' })
  labelId?: string;

  /** Subtasks of this task. */
  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ format: 'uuid' })
  parentId?: string;

  /** Case-insensitive substring of the title (e.g. `release`); `%`, `_` and `\` are literal. */
  @IsOptional()
  @IsString()
  @IsText(0, 200)
  @ApiPropertyOptional({ maxLength: 200 })
  q?: string;

  /** dueDate on or after this day (YYYY-MM-DD, e.g. `2026-12-01`); tasks without due date never match. */
  @IsOptional()
  @IsCalendarDate()
  @ApiPropertyOptional({ type: String, format: 'date' })
  dueAfter?: string;

  /** dueDate on or before this day (YYYY-MM-DD, e.g. `2026-12-31`); tasks without due date never match. */
  @IsOptional()
  @IsCalendarDate()
  @ApiPropertyOptional({ type: String, format: 'date' })
  dueBefore?: string;

  /**
   * `created`: newest first, the specification's order; `rank`: the backlog order, top first;
   * `relevance` (only with `search`): best match first, ties newest first.
   */
  @IsOptional()
  @IsIn(['created', 'rank', 'relevance'], { message: 'must be created, rank or relevance' })
  @OnlyWith('relevance', 'search')
  @ApiPropertyOptional({ enum: ['created', 'rank', 'relevance'], default: 'created' })
  // The default as a value: a cursor of the default order then belongs to `sort=created` too (CursorCodec).
  sort?: 'created' | 'rank' | 'relevance' = 'created';

  /** `true`: only tasks with an estimate; `false`: only tasks without one. */
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'must be true or false' })
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  estimated?: 'true' | 'false';

  /** updatedAt at or after this instant (ISO 8601 with Z or an offset, e.g. `2026-11-22T10:00:00.000Z`): for sync jobs. */
  @IsOptional()
  @IsInstant()
  @ApiPropertyOptional({ type: String, format: 'date-time' })
  updatedSince?: string;

  @IsOptional()
  @IsString()
  @IsText(1, 2000)
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 2000,
    // Its examples are in the description: an example would fill in Try it out (openapi.e2e-spec.ts).
    description: FILTER_DESCRIPTION,
  })
  filter?: string;
}

/**
 * Where a move puts tasks: exactly one of `before`, `after` or `to` (decisions.md section 18).
 * None of them is nullable: null is not "absent" here, it is a place that names nothing (400).
 */
export class MoveTaskDto {
  /** Right before this live task of the project. */
  @OptionalButNotNull()
  @IsString()
  @ApiPropertyOptional({ format: 'uuid' })
  before?: string;

  /** Right after this live task of the project. */
  @OptionalButNotNull()
  @IsString()
  @ApiPropertyOptional({ format: 'uuid' })
  after?: string;

  /** At the top or the bottom of the backlog order. */
  @OptionalButNotNull()
  @IsIn(['top', 'bottom'], { message: 'must be top or bottom' })
  @ApiPropertyOptional({ enum: ['top', 'bottom'] })
  to?: 'top' | 'bottom';
}

/** Several tasks made contiguous at one place, in the order given, all or none. */
export class MoveTasksDto extends MoveTaskDto {
  /** 1 to 100 live tasks of the project, each once, in the order they take. */
  @IsArray()
  @ArrayMinSize(1, { message: 'must hold 1 to 100 task ids' })
  @ArrayMaxSize(100, { message: 'must hold 1 to 100 task ids' })
  @IsString({ each: true })
  @ApiProperty({ type: 'array', items: { type: 'string', format: 'uuid' }, minItems: 1, maxItems: 100 })
  taskIds: string[];
}

export class MovedTasksDto {
  /** In full, in the order given, with their new ranks. */
  tasks: TaskDetailDto[];
}

export class AddDependencyDto {
  /** The task that must be finished first: the task of the path becomes blocked by it. */
  @IsString()
  @ApiProperty({ format: 'uuid' })
  blockedById: string;
}

// ---- What the service answers ----

export class SprintRefDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  name: string;
  @ApiProperty({ enum: SPRINT_STATUSES })
  status: string;
}

export class TaskRefDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  title: string;
  @ApiProperty({ enum: TASK_STATUSES })
  status: string;
}

export class DependenciesDto {
  /** Live tasks this one waits for. */
  blockedBy: TaskRefDto[];
  /** Live tasks that wait for this one. */
  blocks: TaskRefDto[];
}

/** A task as lists show it: no description, no dependencies. */
export class TaskDto {
  @TaskAnswerField()
  id: string;
  @TaskAnswerField()
  projectId: string;
  @TaskAnswerField()
  title: string;
  @TaskAnswerField()
  status: TaskStatus;
  @TaskAnswerField()
  priority: TaskPriority;
  /** The parent task when this is a subtask. */
  @TaskAnswerField()
  parentId: string | null;
  @ApiProperty({ type: MemberDto, nullable: true })
  assignee: MemberDto | null;
  labels: LabelDto[];
  @ApiProperty({ type: SprintRefDto, nullable: true })
  sprint: SprintRefDto | null;
  @TaskAnswerField()
  dueDate: string | null;
  @TaskAnswerField()
  completedAt: string | null;
  @TaskAnswerField()
  createdAt: string;
  @TaskAnswerField()
  updatedAt: string;
  /** Points; null: not estimated. */
  @TaskAnswerField()
  estimate: number | null;
  /** Its place in the backlog order: an opaque string; a task before another in the order has a smaller rank, byte by byte. */
  @TaskAnswerField()
  rank: string;
  /** True while a live task it depends on is not finished. */
  blocked: boolean;
}

/** A task in full: the detail view and the answer of create and update. */
export class TaskDetailDto extends TaskDto {
  @TaskAnswerField()
  description: string | null;
  dependencies: DependenciesDto;
}

// Answers show exactly TASK_FIELDS' shown fields and the relation views (TASK_RELATION_VIEWS),
// as task-view.sql.ts builds them: a shown row without its property, or the reverse, fails the build.
const _taskAnswerHasEveryField: SameKeys<keyof TaskDto, ShownField<typeof TASK_FIELDS, 'list'> | ShownRelation<'list'>, 'TaskDto'> = true;
const _taskDetailHasEveryField: SameKeys<
  keyof TaskDetailDto,
  keyof TaskDto | ShownField<typeof TASK_FIELDS, 'detail'> | ShownRelation<'detail'>,
  'TaskDetailDto'
> = true;

// And each property carries its row's validation and OpenAPI property (fails at start otherwise).
requireFieldDecorators(CreateTaskDto, TaskBodyField, TASK_WRITABLE.all, 'TASK_FIELDS says clients write it');
requireFieldDecorators(TaskDto, TaskAnswerField, shownFields(TASK_FIELDS, 'list'), 'TASK_FIELDS shows it in every answer');
requireFieldDecorators(
  TaskDetailDto,
  TaskAnswerField,
  shownFields(TASK_FIELDS, 'detail').filter((name) => TASK_FIELDS[name].shown === 'detail'),
  'TASK_FIELDS shows it in the detail view',
);

export class TaskResponseDto {
  task: TaskDetailDto;
}

export class BulkCreatedTasksDto {
  /** In full, in the order sent. */
  tasks: TaskDetailDto[];
}

export class TaskListDto {
  /** Newest first (createdAt, then id, descending). */
  tasks: TaskDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page; null on the last page' })
  nextCursor: string | null;
  /** All tasks matching the filters, across all pages. */
  @ApiProperty({ type: 'integer', minimum: 0 })
  total: number;
}
