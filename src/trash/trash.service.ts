import { Injectable } from '@nestjs/common';
import { AttachmentBytes } from '../attachments/attachment-bytes.service';
import type { Caller } from '../auth/caller';
import { conflict, notFound } from '../common/errors/problem';
import type { JsonText } from '../common/http/json-text';
import { PrismaService } from '../database/prisma.service';
import { RetryTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { ChangeLog } from '../changes/change-log.service';
import { CHANGE_TIME } from '../changes/change';
import { lockSprints, lockTasks } from '../changes/locks';
import { trashFilter } from '../tasks/task-list-filters';
import { FilterCompiler } from '../tasks/finding/filter-compiler';
import { TaskReader } from '../tasks/task-reader.service';
import type { TaskDetailDto, TaskResponseDto } from '../tasks/task.dto';
import type { TrashListDto, TrashListQueryDto } from './trash.dto';

@Injectable()
export class TrashService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reader: TaskReader,
    private readonly changes: ChangeLog,
    private readonly attachmentBytes: AttachmentBytes,
    private readonly filters: FilterCompiler,
  ) {}

  /** The project's trash, most recently deleted first, paginated, searched and filtered like the task list. */
  async list(caller: Caller, query: TrashListQueryDto): Promise<JsonText<TrashListDto>> {
    const expression = await this.filters.compile(caller.projectId, query.filter);
    const order = query.sort === 'relevance' ? { relevanceTo: query.search ?? '', list: 'trash' as const } : 'deleted';
    return this.reader.list(caller.projectId, trashFilter(query, expression), order, query);
  }

  /**
   * Brings a task back with the subtasks that were trashed with it, their labels, assignee and
   * dependencies as they were. A sprint closed meanwhile accepts no task: those tasks come back
   * without a sprint (a sprint deleted meanwhile is already gone). A subtask whose parent is in
   * the trash stays there (409): its parent is locked first, so that it cannot go to the trash
   * while the subtask comes back (decisions.md section 17).
   */
  async restore(caller: Caller, taskId: string): Promise<TaskResponseDto> {
    const { projectId } = caller;
    const task = await this.prisma.write(async (tx) => {
      // In the lock order (src/changes/locks.ts): the sprints of the tasks coming back, the
      // task's parent, the task, then the subtasks trashed with it.
      const comingBack = Prisma.sql`t.deleted_at IS NOT NULL AND (t.id = ${taskId}::uuid OR (t.trashed_with_id = ${taskId}::uuid AND t.parent_id = ${taskId}::uuid))`;
      const [sprints, parents, [trashed], subtasks] = await tx.pipeline<
        [LockedSprint[], { id: string; live: boolean }[], LockedTask[], LockedTask[]]
      >(
        lockSprints(
          Prisma.sql`s.id IN (SELECT t.sprint_id FROM tasks t WHERE t.project_id = ${projectId}::uuid AND ${comingBack}) AND s.project_id = ${projectId}::uuid`,
          'FOR SHARE',
        ),
        lockTasks(
          projectId,
          Prisma.sql`t.id = (SELECT parent_id FROM tasks WHERE id = ${taskId}::uuid AND project_id = ${projectId}::uuid)`,
          'FOR SHARE',
          Prisma.sql`t.id::text, t.deleted_at IS NULL AS live`,
        ),
        lockTasks(projectId, Prisma.sql`t.id = ${taskId}::uuid AND t.deleted_at IS NOT NULL`, 'FOR NO KEY UPDATE', LOCKED_TASK),
        lockTasks(
          projectId,
          Prisma.sql`t.trashed_with_id = ${taskId}::uuid AND t.parent_id = ${taskId}::uuid AND t.deleted_at IS NOT NULL`,
          'FOR NO KEY UPDATE',
          LOCKED_TASK,
        ),
      );
      if (!trashed) throw notFound('Task in the trash');
      if (trashed.parentId !== null && !parents.some((parent) => parent.id === trashed.parentId && parent.live)) {
        throw conflict('conflict', 'Its parent task is in the trash: restore the parent first');
      }
      const sprintStatus = new Map(sprints.map((sprint) => [sprint.id, sprint.status]));
      const tasks = [trashed, ...subtasks];
      // A task's sprint cannot change while it is in the trash, but by the sprint's deletion (to
      // none): one that did between the two statements above is not locked. Run again.
      if (tasks.some((row) => row.sprintId !== null && !sprintStatus.has(row.sprintId))) {
        throw new RetryTransaction('a task in the trash changed sprints while it was being restored');
      }
      const leaving = tasks.filter((row) => row.sprintId !== null && sprintStatus.get(row.sprintId) === 'closed');
      const recorded = await this.changes.record(
        tx,
        {
          projectId,
          actor: caller.actor,
          records: tasks.map((row) => ({
            task: row.id,
            action: 'restored' as const,
            changes: leaving.includes(row) ? [{ field: 'sprintId', from: row.sprintId, to: null }] : [],
          })),
        },
        Prisma.sql`
          UPDATE tasks SET deleted_at = NULL, trashed_with_id = NULL, updated_at = ${CHANGE_TIME},
                 sprint_id = CASE WHEN id = ANY(${leaving.map((row) => row.id)}::uuid[]) THEN NULL ELSE sprint_id END
           WHERE id = ANY(${tasks.map((row) => row.id)}::uuid[])`,
      );
      return recorded.tasks[taskId];
    });
    return { task: task as TaskDetailDto };
  }

  /**
   * Destroys a trashed task for good, with its subtasks, labels, dependencies, history, comments
   * and attachments (the database cascades them; the attachments' bytes go after the commit, once
   * no attachment of the project shares them), one `task.purged` event for each task destroyed. A live
   * task is not in the trash: 404. Only what is in the trash when the purge commits is
   * destroyed: the task and its subtasks are locked first, and a subtask found live (which a
   * restore never leaves under a trashed parent) makes it 409 rather than destroy it.
   */
  async purge(caller: Caller, taskId: string): Promise<void> {
    const { projectId } = caller;
    await this.prisma.write(async (tx) => {
      const [[trashed], subtasks, attachments] = await tx.pipeline<[{ id: string }[], { id: string; live: boolean }[], { sha256: string }[]]>(
        lockTasks(projectId, Prisma.sql`t.id = ${taskId}::uuid AND t.deleted_at IS NOT NULL`, 'FOR UPDATE'),
        lockTasks(projectId, Prisma.sql`t.parent_id = ${taskId}::uuid`, 'FOR UPDATE', Prisma.sql`t.id::text, t.deleted_at IS NULL AS live`),
        // After the locks: the bytes the purge may leave without an attachment.
        Prisma.sql`
          SELECT DISTINCT a.sha256 FROM attachments a
           WHERE a.project_id = ${projectId}::uuid
             AND a.task_id IN (SELECT t.id FROM tasks t WHERE t.project_id = ${projectId}::uuid AND (t.id = ${taskId}::uuid OR t.parent_id = ${taskId}::uuid))`,
      );
      if (!trashed) throw notFound('Task in the trash');
      if (subtasks.some((subtask) => subtask.live)) {
        throw conflict('conflict', 'A subtask of this task is not in the trash: trash it too, or restore this task, before destroying it');
      }
      // The task itself first, then the subtasks that go with it.
      const ids = [taskId, ...subtasks.map((subtask) => subtask.id)];
      await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: ids.map((id) => ({ task: id, action: 'purged' as const })) },
        Prisma.sql`DELETE FROM tasks WHERE id = ANY(${ids}::uuid[]) AND project_id = ${projectId}::uuid`,
      );
      this.attachmentBytes.releaseAfterCommit(
        tx,
        projectId,
        attachments.map((attachment) => attachment.sha256),
      );
    });
  }
}

interface LockedSprint {
  id: string;
  status: string;
}

interface LockedTask {
  id: string;
  parentId: string | null;
  sprintId: string | null;
}

const LOCKED_TASK = Prisma.sql`t.id::text, t.parent_id::text AS "parentId", t.sprint_id::text AS "sprintId"`;
