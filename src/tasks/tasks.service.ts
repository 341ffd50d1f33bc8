import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller';
import { notFound } from '../common/errors/problem';
import { assertIfMatch } from '../common/http/entity-tag';
import type { JsonText } from '../common/http/json-text';
import { isUuid } from '../common/ids';
import { PrismaService } from '../database/prisma.service';
import type { SqlTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { ChangeLog } from '../changes/change-log.service';
import { changesBetween, definedOnly } from '../changes/change';
import { TaskStatus } from './task-fields';
import { taskListFilter } from './task-list-filters';
import { TaskReader } from './task-reader.service';
import { checkTaskReferences, FieldName, labelSet } from './task-references';
import type {
  BulkCreatedTasksDto,
  BulkCreateTasksDto,
  CreateTaskDto,
  ListTasksQueryDto,
  TaskDetailDto,
  TaskListDto,
  TaskResponseDto,
  UpdateTaskDto,
} from './task.dto';

/** A task's editable fields as the API names and writes them (history compares these). */
interface TaskFields {
  title: string | null;
  description: string | null;
  status: TaskStatus | null;
  priority: string | null;
  assigneeId: string | null;
  sprintId: string | null;
  labelIds: string[];
  dueDate: string | null;
  parentId?: string | null;
}

const NOTHING: TaskFields = {
  title: null,
  description: null,
  status: null,
  priority: null,
  assigneeId: null,
  sprintId: null,
  labelIds: [],
  dueDate: null,
  parentId: null,
};

@Injectable()
export class TasksService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reader: TaskReader,
    private readonly changes: ChangeLog,
  ) {}

  list(caller: Caller, query: ListTasksQueryDto): Promise<JsonText<TaskListDto>> {
    return this.reader.list(caller.projectId, taskListFilter(query), 'created', query);
  }

  async get(caller: Caller, taskId: string): Promise<TaskResponseDto> {
    const task = isUuid(taskId) ? await this.reader.detail(caller.projectId, taskId) : null;
    if (!task) throw notFound('Task');
    return { task };
  }

  async create(caller: Caller, dto: CreateTaskDto): Promise<TaskResponseDto> {
    const [task] = await this.createMany(caller, [dto]);
    return { task };
  }

  /** Creates up to 100 tasks in one transaction, all or none (decisions.md section 16). */
  async bulkCreate(caller: Caller, dto: BulkCreateTasksDto): Promise<BulkCreatedTasksDto> {
    return { tasks: await this.createMany(caller, dto.tasks, (index, field) => `tasks[${index}].${field}`) };
  }

  /**
   * Creates tasks, answered in full in the order given: their references checked in one
   * statement, the tasks and their labels written in one, their history and events in one.
   */
  private async createMany(caller: Caller, dtos: CreateTaskDto[], name?: FieldName): Promise<TaskDetailDto[]> {
    const { projectId } = caller;
    const tasks = dtos.map((dto) => ({
      id: randomUUID(),
      fields: {
        title: dto.title,
        description: dto.description ?? null,
        status: dto.status ?? TaskStatus.backlog,
        priority: dto.priority ?? 'none',
        assigneeId: dto.assigneeId ?? null,
        sprintId: dto.sprintId ?? null,
        labelIds: labelSet(dto.labelIds ?? []),
        dueDate: dto.dueDate ?? null,
        parentId: dto.parentId ?? null,
      } satisfies TaskFields,
    }));
    return this.prisma.write(async (tx) => {
      await checkTaskReferences(
        tx,
        projectId,
        tasks.map((task) => task.fields),
        name,
      );
      const now = new Date();
      const labels = tasks.flatMap((task) => task.fields.labelIds.map((labelId) => [task.id, labelId]));
      // The tasks and their labels in one statement (a data-modifying CTE).
      await tx.$executeRaw`
        WITH created AS (
          INSERT INTO tasks (id, project_id, parent_id, ${TASK_COLUMNS}, created_at)
          VALUES ${Prisma.join(
            tasks.map(
              (task) =>
                Prisma.sql`(${task.id}::uuid, ${projectId}::uuid, ${task.fields.parentId}::uuid, ${taskValues(task.fields, now)}, ${now.toISOString()}::timestamptz)`,
            ),
          )})
        INSERT INTO task_labels (project_id, task_id, label_id)
        SELECT ${projectId}::uuid, l.task_id, l.label_id
          FROM unnest(${labels.map(([taskId]) => taskId)}::uuid[], ${labels.map(([, labelId]) => labelId)}::uuid[]) AS l(task_id, label_id)`;
      const recorded = await this.changes.record(tx, {
        projectId,
        actor: caller.actor,
        at: now,
        records: tasks.map((task) => ({ task: task.id, action: 'created' as const, changes: changesBetween(NOTHING, task.fields) })),
      });
      return tasks.map((task) => recorded[task.id]);
    });
  }

  /**
   * A partial update. The task row is locked first, so concurrent updates of one task
   * apply one after the other and each records its own history entry. Values equal to
   * the current ones change nothing: no write, no history entry, same updatedAt.
   */
  async update(caller: Caller, taskId: string, dto: UpdateTaskDto, ifMatch?: string): Promise<TaskResponseDto> {
    const { projectId } = caller;
    const task = await this.prisma.write(async (tx) => {
      const current = await lockLiveTask(tx, projectId, taskId);
      await assertIfMatch(ifMatch, async () => ({ task: await this.reader.detail(projectId, taskId, tx) }));
      const requested = definedOnly<TaskFields>({
        title: dto.title,
        description: dto.description,
        status: dto.status,
        priority: dto.priority,
        assigneeId: dto.assigneeId,
        sprintId: dto.sprintId,
        labelIds: dto.labelIds && labelSet(dto.labelIds),
        dueDate: dto.dueDate,
      });
      await checkTaskReferences(tx, projectId, [requested]);
      const changes = changesBetween(current, requested);
      if (changes.length > 0) {
        const now = new Date();
        const next: TaskFields = { ...current, ...requested };
        await tx.$executeRaw`
          UPDATE tasks SET (${TASK_COLUMNS}) = (${taskValues(next, now, current.status)})
           WHERE id = ${taskId}::uuid AND project_id = ${projectId}::uuid`;
        if (requested.labelIds) await replaceLabels(tx, projectId, taskId, requested.labelIds);
        const recorded = await this.changes.record(tx, {
          projectId,
          actor: caller.actor,
          at: now,
          records: [{ task: taskId, action: 'updated', changes }],
        });
        return recorded[taskId];
      }
      return this.reader.detail(projectId, taskId, tx);
    });
    return { task: task as TaskDetailDto };
  }

  /** Sends a live task and its live subtasks to the trash; nothing is destroyed. */
  async trash(caller: Caller, taskId: string, ifMatch?: string): Promise<void> {
    const { projectId } = caller;
    await this.prisma.write(async (tx) => {
      await lockLiveTask(tx, projectId, taskId);
      await assertIfMatch(ifMatch, async () => ({ task: await this.reader.detail(projectId, taskId, tx) }));
      const now = new Date().toISOString();
      // The task first, then its live subtasks, which go with it.
      const trashed = await tx.$queryRaw<{ id: string }[]>`
        UPDATE tasks SET deleted_at = ${now}::timestamptz, trashed_with_id = ${taskId}::uuid, updated_at = ${now}::timestamptz
         WHERE project_id = ${projectId}::uuid AND deleted_at IS NULL AND (id = ${taskId}::uuid OR parent_id = ${taskId}::uuid)
        RETURNING id::text`;
      const ids = [taskId, ...trashed.map((row) => row.id).filter((id) => id !== taskId)];
      await this.changes.record(tx, {
        projectId,
        actor: caller.actor,
        at: new Date(now),
        records: ids.map((id) => ({ task: id, action: 'deleted' as const })),
      });
    });
  }
}

/**
 * Locks a live task of the project for the rest of the transaction and reads its
 * editable fields in API form; 404 when there is none.
 */
export async function lockLiveTask(tx: SqlTransaction, projectId: string, taskId: string): Promise<TaskFields> {
  const rows = isUuid(taskId)
    ? await tx.$queryRaw<TaskFields[]>`
        SELECT t.title, t.description, t.status::text AS status, t.priority::text AS priority,
               t.assignee_id::text AS "assigneeId", t.sprint_id::text AS "sprintId",
               to_char(t.due_date, 'YYYY-MM-DD') AS "dueDate",
               ARRAY(SELECT tl.label_id::text FROM task_labels tl WHERE tl.task_id = t.id ORDER BY 1) AS "labelIds"
          FROM tasks t
         WHERE t.id = ${taskId}::uuid AND t.project_id = ${projectId}::uuid AND t.deleted_at IS NULL
           FOR UPDATE`
    : [];
  if (rows.length === 0) throw notFound('Task');
  return rows[0];
}

// Task writes are raw SQL on purpose: a Prisma model query first goes through Prisma's
// query compiler, which costs more CPU than the write itself (README.md, Performance).

/** The columns a create or an update writes, in the order of `taskValues`. */
const TASK_COLUMNS = Prisma.raw('title, description, status, priority, assignee_id, sprint_id, due_date, completed_at, updated_at');

/**
 * The values of TASK_COLUMNS for a task's fields. `completedAt` follows the status: set on
 * entering `done` (also at creation), cleared on leaving it, kept while it stays done.
 */
function taskValues(fields: TaskFields, now: Date, previousStatus: TaskStatus | null = null): Prisma.Sql {
  const at = now.toISOString();
  const completedAt =
    fields.status !== TaskStatus.done
      ? Prisma.sql`NULL`
      : previousStatus === TaskStatus.done
        ? Prisma.sql`completed_at`
        : Prisma.sql`${at}::timestamptz`;
  return Prisma.sql`${fields.title}, ${fields.description}, ${fields.status}::task_status, ${fields.priority}::task_priority,
    ${fields.assigneeId}::uuid, ${fields.sprintId}::uuid, ${fields.dueDate}::date, ${completedAt}, ${at}::timestamptz`;
}

/** Sets a task's labels to exactly `labelIds`, in one statement. */
async function replaceLabels(tx: SqlTransaction, projectId: string, taskId: string, labelIds: string[]): Promise<void> {
  await tx.$executeRaw`
    WITH removed AS (DELETE FROM task_labels WHERE task_id = ${taskId}::uuid AND label_id <> ALL(${labelIds}::uuid[]))
    INSERT INTO task_labels (project_id, task_id, label_id)
    SELECT ${projectId}::uuid, ${taskId}::uuid, label_id FROM unnest(${labelIds}::uuid[]) AS label_id
    ON CONFLICT DO NOTHING`;
}
