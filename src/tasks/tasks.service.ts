import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller';
import { assertIfMatch } from '../common/http/entity-tag';
import type { JsonText } from '../common/http/json-text';
import { PrismaService } from '../database/prisma.service';
import { Prisma } from '../generated/prisma/client';
import { ChangeLog, recordSequence } from '../changes/change-log.service';
import { Change, CHANGE_TIME, changesBetween } from '../changes/change';
import { sentFields, withDefaults } from '../common/fields/fields';
import { lockTasks } from '../changes/locks';
import { FINISHED_STATUSES, NO_TASK_FIELDS, PatchableTaskFields, TASK_FIELDS, TASK_SQL, TASK_WRITABLE, TaskFields, TaskStatus } from './task-fields';
import { taskListFilter } from './task-list-filters';
import { FilterCompiler } from './finding/filter-compiler';
import { TaskReader } from './task-reader.service';
import { createdRank } from './task-ranks';
import { assertReferences, FieldName, labelSet, referenceLocks } from './task-references';
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
import { liveTaskNotFound } from './live-task-not-found';

@Injectable()
export class TasksService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reader: TaskReader,
    private readonly changes: ChangeLog,
    private readonly filters: FilterCompiler,
  ) {}

  async list(caller: Caller, query: ListTasksQueryDto): Promise<JsonText<TaskListDto>> {
    const expression = await this.filters.compile(caller.projectId, query.filter);
    const sort = query.sort ?? 'created';
    const order = sort === 'relevance' ? { relevanceTo: query.search ?? '', list: 'tasks' as const } : sort;
    return this.reader.list(caller.projectId, taskListFilter(query, expression), order, query);
  }

  async get(caller: Caller, taskId: string): Promise<TaskResponseDto> {
    const task = await this.reader.detail(caller.projectId, taskId);
    if (!task) throw await liveTaskNotFound(this.prisma.sql, caller.projectId, taskId);
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
   * Creates tasks, answered in full in the order given: their references locked and checked in
   * one round trip, then the tasks and their labels written with their history and events
   * (ChangeLog.record) in another.
   */
  private async createMany(caller: Caller, dtos: CreateTaskDto[], name?: FieldName): Promise<TaskDetailDto[]> {
    const { projectId } = caller;
    const tasks = dtos.map((dto) => ({
      id: randomUUID(),
      fields: { ...withDefaults(TASK_FIELDS, dto), labelIds: labelSet(dto.labelIds ?? []) } satisfies TaskFields,
    }));
    const bodies = tasks.map((task) => task.fields);
    return this.prisma.write(async (tx) => {
      const references = referenceLocks(projectId, bodies);
      assertReferences(references.length > 0 ? await tx.pipeline(...references) : [], bodies, name);
      const labels = tasks.flatMap((task) => task.fields.labelIds.map((labelId) => [task.id, labelId]));
      // The tasks and their labels in one statement (a data-modifying CTE).
      const change: Change = {
        projectId,
        actor: caller.actor,
        records: tasks.map((task) => ({ task: task.id, action: 'created' as const, changes: changesBetween(NO_TASK_FIELDS, task.fields) })),
      };
      const written = TASK_SQL.writing(TASK_WRITABLE.all);
      // Each at the bottom, in the order given: its rank from its created event's number (task-ranks.ts).
      const insert = Prisma.sql`
        WITH created AS (
          INSERT INTO tasks (id, project_id, ${written.columns}, completed_at, updated_at, created_at, rank)
          VALUES ${Prisma.join(
            tasks.map(
              (task, index) =>
                Prisma.sql`(${task.id}::uuid, ${projectId}::uuid, ${written.values(task.fields)}, ${completedAt(task.fields.status)},
                            ${CHANGE_TIME}, ${CHANGE_TIME}, ${createdRank(recordSequence(change, index + 1))})`,
            ),
          )})
        INSERT INTO task_labels (project_id, task_id, label_id)
        SELECT ${projectId}::uuid, l.task_id, l.label_id
          FROM unnest(${labels.map(([taskId]) => taskId)}::uuid[], ${labels.map(([, labelId]) => labelId)}::uuid[]) AS l(task_id, label_id)`;
      const recorded = await this.changes.record(tx, change, insert);
      return tasks.map((task) => recorded.tasks[task.id]);
    });
  }

  /**
   * A partial update. The sprint the body names, then the task, are locked first, and the
   * task's fields read once it is locked, so concurrent updates of one task apply one after the
   * other, each compared with what the one before it committed. Values equal to the current
   * ones change nothing: no write, no history entry, same updatedAt. A task that the body leaves
   * open inside a closed sprint leaves that sprint (leavesClosedSprint).
   */
  async update(caller: Caller, taskId: string, dto: UpdateTaskDto, ifMatch?: string): Promise<TaskResponseDto> {
    const { projectId } = caller;
    const sent: Partial<LockedTask> = sentFields(TASK_FIELDS, dto);
    const labelIds = dto.labelIds && labelSet(dto.labelIds);
    const named = [{ ...sent, labelIds }];
    const task = await this.prisma.write(async (tx) => {
      const references = referenceLocks(projectId, named);
      // Read after the task's lock, and only when the body reads them: its labels when it sets
      // them (nothing else compares them), its sprint's status when it sets the status.
      const after = [...(labelIds ? [labelsOf(taskId)] : []), ...(dto.status !== undefined ? [sprintStatusOf(taskId)] : [])];
      const answers = await tx.pipeline(...references, lockLiveTask(projectId, taskId), ...after);
      const [[locked], ...read] = answers.slice(references.length) as [LockedTask[], ...unknown[][]];
      if (!locked) throw await liveTaskNotFound(tx, projectId, taskId);
      const labels = labelIds ? (read.shift() as { id: string }[]) : undefined;
      const [sprint] = dto.status !== undefined ? (read.shift() as { status: string }[]) : [];
      await assertIfMatch(ifMatch, async () => ({ task: await this.reader.detail(projectId, taskId, tx) }));
      assertReferences(answers.slice(0, references.length), named);
      const fields = leavesClosedSprint(dto, sprint?.status) ? sentFields(TASK_FIELDS, { ...dto, sprintId: null }) : sent;
      // The fields in TASK_FIELDS' order, then labelIds: the history entry's order before labels were read apart.
      const changes = [
        ...changesBetween(locked, fields),
        ...(labelIds && labels ? changesBetween({ labelIds: labels.map((label) => label.id) }, { labelIds }) : []),
      ];
      if (changes.length === 0) return this.reader.detail(projectId, taskId, tx);
      const next: LockedTask = { ...locked, ...fields };
      const written = TASK_SQL.writing(TASK_WRITABLE.patchable);
      const recorded = await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: [{ task: taskId, action: 'updated', changes }] },
        Prisma.sql`
          UPDATE tasks SET (${written.columns}, completed_at, updated_at) = (${written.values(next)}, ${completedAt(next.status, locked.status)}, ${CHANGE_TIME})
           WHERE id = ${taskId}::uuid AND project_id = ${projectId}::uuid`,
        ...(labelIds ? [replaceLabels(projectId, taskId, labelIds)] : []),
      );
      return recorded.tasks[taskId];
    });
    return { task: task as TaskDetailDto };
  }

  /** Sends a live task and its live subtasks to the trash; nothing is destroyed. */
  async trash(caller: Caller, taskId: string, ifMatch?: string): Promise<void> {
    const { projectId } = caller;
    await this.prisma.write(async (tx) => {
      // The task, then its live subtasks, which go with it (a parent before its subtasks).
      const [[task], subtasks] = await tx.pipeline<[{ id: string }[], { id: string }[]]>(
        lockTasks(projectId, Prisma.sql`t.id = ${taskId}::uuid AND t.deleted_at IS NULL`, 'FOR NO KEY UPDATE'),
        lockTasks(projectId, Prisma.sql`t.parent_id = ${taskId}::uuid AND t.deleted_at IS NULL`, 'FOR NO KEY UPDATE'),
      );
      if (!task) throw await liveTaskNotFound(tx, projectId, taskId);
      await assertIfMatch(ifMatch, async () => ({ task: await this.reader.detail(projectId, taskId, tx) }));
      const ids = [taskId, ...subtasks.map((subtask) => subtask.id)];
      await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: ids.map((id) => ({ task: id, action: 'deleted' as const })) },
        Prisma.sql`
          UPDATE tasks SET deleted_at = ${CHANGE_TIME}, trashed_with_id = ${taskId}::uuid, updated_at = ${CHANGE_TIME}
           WHERE id = ANY(${ids}::uuid[]) AND project_id = ${projectId}::uuid`,
      );
    });
  }
}

/** The fields a PATCH may change but labelIds, which labelsOf reads after the lock: what lockLiveTask answers. */
type LockedTask = Omit<PatchableTaskFields, 'labelIds'>;

/**
 * A live task of the project, locked for an update (src/changes/locks.ts): the fields a PATCH
 * may change, in API form, but labelIds, which labelsOf reads after the lock.
 */
function lockLiveTask(projectId: string, taskId: string): Prisma.Sql {
  return lockTasks(
    projectId,
    Prisma.sql`t.id = ${taskId}::uuid AND t.deleted_at IS NULL`,
    'FOR NO KEY UPDATE',
    TASK_SQL.select(TASK_WRITABLE.patchable),
  );
}

/**
 * The status of the task's sprint (no row without one): a statement of its own, after the one
 * that locks the task, so that it sees a close that committed while the PATCH waited for the task.
 */
function sprintStatusOf(taskId: string): Prisma.Sql {
  return Prisma.sql`SELECT s.status::text AS status FROM sprints s WHERE s.id = (SELECT t.sprint_id FROM tasks t WHERE t.id = ${taskId}::uuid)`;
}

/**
 * Whether the PATCH takes the task out of its sprint, `sprintStatus` (undefined: none, or the
 * body sets no status): a closed sprint keeps only the finished tasks its close left there, so a
 * task the body leaves open there (reopened, uncancelled) leaves it, unless the body itself says
 * where the task goes. As a task restored from the trash comes back without its closed sprint.
 * The close locks every task of the sprint, so this PATCH either committed before the close
 * read the task (which the close then moves as open) or finds the sprint closed here.
 */
function leavesClosedSprint(dto: UpdateTaskDto, sprintStatus: string | undefined): boolean {
  return sprintStatus === 'closed' && dto.status !== undefined && !FINISHED_STATUSES.includes(dto.status) && dto.sprintId === undefined;
}

/** A task's label ids, in labelSet's order: a statement of its own, after the one that locks the task. */
function labelsOf(taskId: string): Prisma.Sql {
  return Prisma.sql`SELECT label_id::text AS id FROM task_labels WHERE task_id = ${taskId}::uuid ORDER BY 1`;
}

// Task writes are raw SQL on purpose: a Prisma model query first goes through Prisma's
// query compiler, which costs more CPU than the write itself (README.md, Performance).

/**
 * `completed_at` at the change's time for a task entering `done` (also at creation), kept
 * while it stays done, cleared on leaving it.
 */
function completedAt(status: TaskStatus, previousStatus: TaskStatus | null = null): Prisma.Sql {
  return status !== TaskStatus.done ? Prisma.sql`NULL` : previousStatus === TaskStatus.done ? Prisma.sql`completed_at` : CHANGE_TIME;
}

/** Sets a task's labels to exactly `labelIds`, in one statement. */
function replaceLabels(projectId: string, taskId: string, labelIds: string[]): Prisma.Sql {
  return Prisma.sql`
    WITH removed AS (DELETE FROM task_labels WHERE task_id = ${taskId}::uuid AND label_id <> ALL(${labelIds}::uuid[]))
    INSERT INTO task_labels (project_id, task_id, label_id)
    SELECT ${projectId}::uuid, ${taskId}::uuid, label_id FROM unnest(${labelIds}::uuid[]) AS label_id
    ON CONFLICT DO NOTHING`;
}
