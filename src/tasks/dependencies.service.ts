import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { badRequest, conflict, notFound } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import { PrismaService } from '../database/prisma.service';
import type { SqlTransaction } from '../database/sql';
import { ChangeLog } from '../changes/change-log.service';
import { TaskReader } from './task-reader.service';
import type { TaskDetailDto, TaskResponseDto } from './task.dto';

/**
 * "Task A is blocked by task B". Dependency changes of a project run one at a time (a
 * transaction-scoped advisory lock), so the cycle check, one recursive query over the
 * graph, cannot be raced by a concurrent insert closing the same cycle.
 */
@Injectable()
export class DependenciesService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reader: TaskReader,
    private readonly changes: ChangeLog,
  ) {}

  async add(caller: Caller, taskId: string, blockedById: string): Promise<TaskResponseDto> {
    if (blockedById === taskId) throw badRequest('validation_failed', 'a task cannot be blocked by itself', 'blockedById');
    const { projectId } = caller;
    const task = await this.prisma.write(async (tx) => {
      await tx.lock(`dependencies:${projectId}`);
      await assertLiveTasks(tx, projectId, [taskId, blockedById]);
      const [{ exists }] = await tx.$queryRaw<{ exists: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM task_dependencies WHERE task_id = ${taskId}::uuid AND blocked_by_id = ${blockedById}::uuid) AS exists`;
      if (exists) throw conflict('dependency_exists', 'This task is already blocked by that task');
      if (await wouldCloseCycle(tx, taskId, blockedById)) {
        throw conflict('dependency_cycle', 'That task already depends on this one, directly or through others');
      }
      const now = new Date();
      await tx.$executeRaw`
        WITH link AS (
          INSERT INTO task_dependencies (project_id, task_id, blocked_by_id, created_at)
          VALUES (${projectId}::uuid, ${taskId}::uuid, ${blockedById}::uuid, ${now.toISOString()}::timestamptz))
        UPDATE tasks SET updated_at = ${now.toISOString()}::timestamptz WHERE id = ${taskId}::uuid`;
      const recorded = await this.changes.record(tx, {
        projectId,
        actor: caller.actor,
        at: now,
        records: [{ task: taskId, action: 'dependency_added', blockedById }],
      });
      return recorded[taskId];
    });
    return { task: task as TaskDetailDto };
  }

  async remove(caller: Caller, taskId: string, blockedById: string): Promise<void> {
    const { projectId } = caller;
    await this.prisma.write(async (tx) => {
      await tx.lock(`dependencies:${projectId}`);
      await assertLiveTasks(tx, projectId, [taskId, blockedById], 'Dependency');
      const now = new Date();
      const [{ removed }] = await tx.$queryRaw<{ removed: number }[]>`
        WITH link AS (
          DELETE FROM task_dependencies
           WHERE project_id = ${projectId}::uuid AND task_id = ${taskId}::uuid AND blocked_by_id = ${blockedById}::uuid
          RETURNING task_id),
        touched AS (UPDATE tasks SET updated_at = ${now.toISOString()}::timestamptz WHERE id IN (SELECT task_id FROM link))
        SELECT count(*)::int AS removed FROM link`;
      if (removed === 0) throw notFound('Dependency');
      await this.changes.record(tx, {
        projectId,
        actor: caller.actor,
        at: now,
        records: [{ task: taskId, action: 'dependency_removed', blockedById }],
      });
    });
  }
}

/** Both tasks live in the caller's project, locked against a concurrent trip to the trash. */
async function assertLiveTasks(tx: SqlTransaction, projectId: string, ids: string[], what = 'Task'): Promise<void> {
  const found = ids.every(isUuid)
    ? await tx.$queryRaw<{ id: string }[]>`
        SELECT id::text FROM tasks
         WHERE id IN (${ids[0]}::uuid, ${ids[1]}::uuid) AND project_id = ${projectId}::uuid AND deleted_at IS NULL
           FOR SHARE`
    : [];
  if (found.length !== ids.length) throw notFound(what);
}

/**
 * Would "taskId is blocked by blockedById" close a cycle? It would when blockedById already
 * waits for taskId, through any chain. Trashed tasks count too: restoring one brings its
 * dependencies back, and they must not form a cycle then.
 */
async function wouldCloseCycle(tx: SqlTransaction, taskId: string, blockedById: string): Promise<boolean> {
  const [row] = await tx.$queryRaw<{ cycle: boolean }[]>`
    WITH RECURSIVE waits_for(id) AS (
      SELECT blocked_by_id FROM task_dependencies WHERE task_id = ${blockedById}::uuid
      UNION
      SELECT d.blocked_by_id FROM task_dependencies d JOIN waits_for w ON d.task_id = w.id
    )
    SELECT EXISTS (SELECT 1 FROM waits_for WHERE id = ${taskId}::uuid) AS cycle`;
  return row.cycle;
}
