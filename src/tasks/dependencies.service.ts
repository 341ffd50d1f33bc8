import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { badRequest, conflict, notFound } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import { PrismaService } from '../database/prisma.service';
import { advisoryLock } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { ChangeLog } from '../changes/change-log.service';
import { CHANGE_TIME } from '../changes/change';
import { lockTasks } from '../changes/locks';
import type { TaskDetailDto, TaskResponseDto } from './task.dto';
import { liveTaskNotFound } from './live-task-not-found';
import { referenceNotFound } from './task-references';

/**
 * "Task A is blocked by task B". Dependency changes of a project run one at a time (a
 * transaction-scoped advisory lock, first in the lock order: src/changes/locks.ts), so the cycle
 * check, one recursive query over the graph, cannot be raced by a concurrent insert closing the
 * same cycle, whichever end it is added from.
 */
@Injectable()
export class DependenciesService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly changes: ChangeLog,
  ) {}

  async add(caller: Caller, taskId: string, blockedById: string): Promise<TaskResponseDto> {
    if (blockedById === taskId) throw badRequest('validation_failed', 'a task cannot be blocked by itself', 'blockedById');
    const { projectId } = caller;
    // The path's id is read by PathIdPipe; the body's is checked here.
    if (!isUuid(blockedById)) throw referenceNotFound('task', 'blockedById', [blockedById]);
    const task = await this.prisma.write(async (tx) => {
      const [, first, second, [{ exists }], [{ cycle }]] = await tx.pipeline<
        [unknown[], unknown[], unknown[], { exists: boolean }[], { cycle: boolean }[]]
      >(
        ...lockBoth(projectId, taskId, blockedById),
        Prisma.sql`SELECT EXISTS (SELECT 1 FROM task_dependencies WHERE task_id = ${taskId}::uuid AND blocked_by_id = ${blockedById}::uuid) AS exists`,
        wouldCloseCycle(taskId, blockedById),
      );
      if (first.length + second.length !== 2) throw await liveTaskNotFound(tx, projectId, [taskId, blockedById]);
      if (exists) throw conflict('dependency_exists', 'This task is already blocked by that task');
      if (cycle) throw conflict('dependency_cycle', 'That task already depends on this one, directly or through others');
      const recorded = await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: [{ task: taskId, action: 'dependency_added', blockedById }] },
        Prisma.sql`
          WITH link AS (
            INSERT INTO task_dependencies (project_id, task_id, blocked_by_id, created_at)
            VALUES (${projectId}::uuid, ${taskId}::uuid, ${blockedById}::uuid, ${CHANGE_TIME}))
          UPDATE tasks SET updated_at = ${CHANGE_TIME} WHERE id = ${taskId}::uuid`,
      );
      return recorded.tasks[taskId];
    });
    return { task: task as TaskDetailDto };
  }

  async remove(caller: Caller, taskId: string, blockedById: string): Promise<void> {
    const { projectId } = caller;
    await this.prisma.write(async (tx) => {
      const [, first, second, [{ exists }]] = await tx.pipeline<[unknown[], unknown[], unknown[], { exists: boolean }[]]>(
        ...lockBoth(projectId, taskId, blockedById),
        Prisma.sql`
          SELECT EXISTS (SELECT 1 FROM task_dependencies
                          WHERE project_id = ${projectId}::uuid AND task_id = ${taskId}::uuid AND blocked_by_id = ${blockedById}::uuid) AS exists`,
      );
      if (first.length + second.length !== 2) throw await liveTaskNotFound(tx, projectId, [taskId, blockedById], 'Dependency');
      if (!exists) throw notFound('Dependency');
      await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: [{ task: taskId, action: 'dependency_removed', blockedById }] },
        Prisma.sql`
          WITH link AS (
            DELETE FROM task_dependencies
             WHERE project_id = ${projectId}::uuid AND task_id = ${taskId}::uuid AND blocked_by_id = ${blockedById}::uuid)
          UPDATE tasks SET updated_at = ${CHANGE_TIME} WHERE id = ${taskId}::uuid`,
      );
    });
  }
}

/**
 * The project's dependency lock, then both tasks, live in the caller's project, by id: the
 * blocked task for an update (its updatedAt moves), the blocker against a trip to the trash.
 * Each task locked by a statement of its own, so that the order is the ids'.
 */
function lockBoth(projectId: string, taskId: string, blockedById: string): Prisma.Sql[] {
  const lock = (id: string) =>
    lockTasks(projectId, Prisma.sql`t.id = ${id}::uuid AND t.deleted_at IS NULL`, id === taskId ? 'FOR NO KEY UPDATE' : 'FOR SHARE');
  return [advisoryLock(`dependencies:${projectId}`), ...[taskId, blockedById].sort().map(lock)];
}

/**
 * Would "taskId is blocked by blockedById" close a cycle? It would when blockedById already
 * waits for taskId, through any chain. Trashed tasks count too: restoring one brings its
 * dependencies back, and they must not form a cycle then.
 */
function wouldCloseCycle(taskId: string, blockedById: string): Prisma.Sql {
  return Prisma.sql`
    WITH RECURSIVE waits_for(id) AS (
      SELECT blocked_by_id FROM task_dependencies WHERE task_id = ${blockedById}::uuid
      UNION
      SELECT d.blocked_by_id FROM task_dependencies d JOIN waits_for w ON d.task_id = w.id
    )
    SELECT EXISTS (SELECT 1 FROM waits_for WHERE id = ${taskId}::uuid) AS cycle`;
}
