import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { conflict, notFound } from '../common/errors/problem';
import type { JsonText } from '../common/http/json-text';
import { isUuid } from '../common/ids';
import { PageQueryDto } from '../common/pagination/page.dto';
import { PrismaService } from '../database/prisma.service';
import type { SqlTransaction } from '../database/sql';
import { ChangeLog } from '../changes/change-log.service';
import { TRASH_FILTER } from '../tasks/task-list-filters';
import { TaskReader } from '../tasks/task-reader.service';
import type { TaskDetailDto, TaskResponseDto } from '../tasks/task.dto';
import type { TrashListDto } from './trash.dto';

@Injectable()
export class TrashService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reader: TaskReader,
    private readonly changes: ChangeLog,
  ) {}

  /** The project's trash, most recently deleted first, paginated like the task list. */
  list(caller: Caller, query: PageQueryDto): Promise<JsonText<TrashListDto>> {
    return this.reader.list(caller.projectId, TRASH_FILTER, 'deleted', query);
  }

  /**
   * Brings a task back with the subtasks that were trashed with it, their labels,
   * assignee and dependencies as they were. A sprint closed meanwhile accepts no task:
   * those tasks come back without a sprint (a sprint deleted meanwhile is already gone).
   */
  async restore(caller: Caller, taskId: string): Promise<TaskResponseDto> {
    const { projectId } = caller;
    const task = await this.prisma.write(async (tx) => {
      const trashed = await lockTrashedTask(tx, projectId, taskId);
      if (trashed.parent_deleted) throw conflict('conflict', 'Its parent task is in the trash: restore the parent first');
      const now = new Date();
      // The task and the subtasks trashed with it, in one statement; a sprint closed meanwhile
      // is left (the old row's sprint is what history records).
      const restored = await tx.$queryRaw<{ id: string; sprint_id: string | null; left_closed_sprint: boolean }[]>`
        WITH coming_back AS (
          SELECT t.id, t.sprint_id, s.status = 'closed' AS left_closed_sprint
            FROM tasks t LEFT JOIN sprints s ON s.id = t.sprint_id
           WHERE t.project_id = ${projectId}::uuid AND t.deleted_at IS NOT NULL
             AND (t.id = ${taskId}::uuid OR (t.trashed_with_id = ${taskId}::uuid AND t.parent_id = ${taskId}::uuid))
        ),
        updated AS (
          UPDATE tasks t SET deleted_at = NULL, trashed_with_id = NULL, updated_at = ${now.toISOString()}::timestamptz,
                 sprint_id = CASE WHEN c.left_closed_sprint THEN NULL ELSE t.sprint_id END
            FROM coming_back c WHERE t.id = c.id
        )
        SELECT id::text, sprint_id::text, COALESCE(left_closed_sprint, false) AS left_closed_sprint FROM coming_back
         ORDER BY id = ${taskId}::uuid DESC, id`;
      const recorded = await this.changes.record(tx, {
        projectId,
        actor: caller.actor,
        at: now,
        records: restored.map((row) => ({
          task: row.id,
          action: 'restored' as const,
          changes: row.left_closed_sprint ? [{ field: 'sprintId', from: row.sprint_id, to: null }] : [],
        })),
      });
      return recorded[taskId];
    });
    return { task: task as TaskDetailDto };
  }

  /**
   * Destroys a trashed task for good, with its subtasks, labels, dependencies and history
   * (the database cascades them), one `task.purged` event for each task destroyed. A live
   * task is not in the trash: 404.
   */
  async purge(caller: Caller, taskId: string): Promise<void> {
    const { projectId } = caller;
    await this.prisma.write(async (tx) => {
      await lockTrashedTask(tx, projectId, taskId);
      const destroyed = await tx.$queryRaw<{ id: string }[]>`
        DELETE FROM tasks WHERE project_id = ${projectId}::uuid AND (id = ${taskId}::uuid OR parent_id = ${taskId}::uuid) RETURNING id::text`;
      await this.changes.record(tx, {
        projectId,
        actor: caller.actor,
        at: new Date(),
        // The task itself first, then the subtasks that went with it.
        records: destroyed
          .map((row) => row.id)
          .sort((a, b) => Number(b === taskId) - Number(a === taskId))
          .map((id) => ({ task: id, action: 'purged' as const })),
      });
    });
  }
}

async function lockTrashedTask(tx: SqlTransaction, projectId: string, taskId: string): Promise<{ parent_deleted: boolean }> {
  const rows = isUuid(taskId)
    ? await tx.$queryRaw<{ parent_deleted: boolean }[]>`
        SELECT (parent.deleted_at IS NOT NULL) AS parent_deleted
          FROM tasks t LEFT JOIN tasks parent ON parent.id = t.parent_id
         WHERE t.id = ${taskId}::uuid AND t.project_id = ${projectId}::uuid AND t.deleted_at IS NOT NULL
           FOR UPDATE OF t`
    : [];
  if (rows.length === 0) throw notFound('Task in the trash');
  return rows[0];
}
