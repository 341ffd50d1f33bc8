import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { ChangeLog } from '../changes/change-log.service';
import { CHANGE_TIME, TaskChange } from '../changes/change';
import { lockTasks } from '../changes/locks';
import { badRequest, conflict } from '../common/errors/problem';
import { assertIfMatch } from '../common/http/entity-tag';
import { isUuid } from '../common/ids';
import { PrismaService } from '../database/prisma.service';
import { advisoryLock, RetryTransaction, SqlTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { TaskReader } from './task-reader.service';
import { ceilingAfter, Neighbourhood, place, RANK_WINDOW, rankText, rankValue } from './task-ranks';
import type { MovedTasksDto, MoveTaskDto, MoveTasksDto, TaskDetailDto, TaskResponseDto } from './task.dto';
import { liveTaskNotFound } from './live-task-not-found';
import { referenceNotFound } from './task-references';

type Where = { before: string } | { after: string } | { to: 'top' | 'bottom' };

interface RankedTask {
  id: string;
  rank: string;
  live: boolean;
}

/**
 * The backlog order (decisions.md section 18): moves of one task or of several, which take new
 * ranks between the neighbours of their place (src/tasks/task-ranks.ts says how ranks work).
 *
 * Moves of a project run one at a time (the advisory lock `ranks:<project>`, first in the lock
 * order of src/changes/locks.ts): the neighbours a move reads cannot be moved under it, and
 * creates only ever add ranks above every existing one, below which the bottom of a move stays.
 * The tasks whose ranks change, and the task a move is placed against, are then locked by id,
 * and checked again (one may have been destroyed meanwhile), before the change is recorded.
 */
@Injectable()
export class TaskOrderService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reader: TaskReader,
    private readonly changes: ChangeLog,
  ) {}

  /** Moves one task; answers it with its new rank. */
  async move(caller: Caller, taskId: string, dto: MoveTaskDto, ifMatch?: string): Promise<TaskResponseDto> {
    const where = placeOf(dto, [taskId]);
    const [task] = await this.place(caller, [taskId], where, (tx) =>
      assertIfMatch(ifMatch, async () => ({ task: await this.reader.detail(caller.projectId, taskId, tx) })),
    );
    return { task };
  }

  /** Makes `taskIds` contiguous at one place, in that order; answers them in that order. */
  async moveMany(caller: Caller, dto: MoveTasksDto): Promise<MovedTasksDto> {
    if (new Set(dto.taskIds).size !== dto.taskIds.length) throw badRequest('validation_failed', 'taskIds names a task twice', 'taskIds');
    return { tasks: await this.place(caller, dto.taskIds, placeOf(dto, dto.taskIds)) };
  }

  private async place(
    caller: Caller,
    taskIds: string[],
    where: Where,
    precondition?: (tx: SqlTransaction) => Promise<void>,
  ): Promise<TaskDetailDto[]> {
    const { projectId } = caller;
    const anchorId = 'before' in where ? where.before : 'after' in where ? where.after : null;
    // Path ids are UUIDs (PathIdPipe): an id of another shape comes from the body.
    const shapeless = taskIds.findIndex((id) => !isUuid(id));
    if (shapeless !== -1) throw referenceNotFound('task', `taskIds[${shapeless}]`, [taskIds[shapeless]]);
    if (anchorId !== null && !isUuid(anchorId)) throw referenceNotFound('task', 'before' in where ? 'before' : 'after', [anchorId]);
    return this.prisma.write(async (tx) => {
      const [, moving, anchors, below, above, [{ last }]] = await tx.pipeline<
        [unknown[], RankedTask[], RankedTask[], RankedTask[], RankedTask[], { last: string }[]]
      >(
        advisoryLock(`ranks:${projectId}`),
        Prisma.sql`${RANKED} WHERE t.project_id = ${projectId}::uuid AND t.id = ANY(${taskIds}::uuid[])`,
        Prisma.sql`${RANKED} WHERE t.project_id = ${projectId}::uuid AND t.id = ${anchorId}::uuid`,
        ...neighbours(projectId, taskIds, where),
        Prisma.sql`SELECT COALESCE((SELECT last_sequence FROM event_sequences WHERE project_id = ${projectId}::uuid), 0)::text AS last`,
      );
      const found = new Map(moving.map((task) => [task.id, task]));
      if (taskIds.some((id) => !found.get(id)?.live) || (anchorId && !anchors[0]?.live)) {
        throw await liveTaskNotFound(tx, projectId, [...taskIds, ...(anchorId ? [anchorId] : [])]);
      }
      const around: Neighbourhood = {
        below: below.map((task) => ({ id: task.id, rank: rankValue(task.rank) })),
        above: above.map((task) => ({ id: task.id, rank: rankValue(task.rank) })),
        floor: 0n,
        ceiling: ceilingAfter(BigInt(last)),
      };
      const current = taskIds.map((id) => rankValue(found.get(id)!.rank));
      const ranks = alreadyThere(current, around) ? { moved: current, rebalanced: [] } : place(around, taskIds.length);
      if (!ranks) throw conflict('conflict', 'No room is left in the backlog order around that place; retry the move');
      const rewritten = [...taskIds.map((id, i) => ({ id, rank: ranks.moved[i] })), ...ranks.rebalanced];
      const changed = rewritten.filter(
        ({ id, rank }) => rankValue((found.get(id) ?? [...below, ...above].find((task) => task.id === id))!.rank) !== rank,
      );

      // The tasks whose ranks change and the one it is placed against, locked by id; what was read of them must still hold.
      const lockedIds = [...new Set([...changed.map((task) => task.id), ...(anchorId ? [anchorId] : [])])];
      const locked = await tx.$queryRaw<RankedTask[]>(
        lockTasks(
          projectId,
          Prisma.sql`t.id = ANY(${lockedIds}::uuid[])`,
          'FOR NO KEY UPDATE',
          Prisma.sql`t.id::text, t.rank, t.deleted_at IS NULL AS live`,
        ),
      );
      const before = new Map([...moving, ...anchors, ...below, ...above].map((task) => [task.id, task]));
      if (
        locked.length !== lockedIds.length ||
        locked.some((task) => task.rank !== before.get(task.id)?.rank || task.live !== before.get(task.id)?.live)
      ) {
        throw new RetryTransaction('a task of the move changed between its reading and its lock');
      }
      await precondition?.(tx);
      if (changed.length === 0) return Promise.all(taskIds.map(async (id) => (await this.reader.detail(projectId, id, tx))!));

      // The moved tasks that keep their ranks are read now: record commits, and shows only the tasks it changes.
      const kept = new Map<string, TaskDetailDto>();
      for (const id of taskIds) if (!changed.some((task) => task.id === id)) kept.set(id, (await this.reader.detail(projectId, id, tx))!);
      const records: TaskChange[] = changed.map(({ id, rank }) => ({
        task: id,
        action: 'updated',
        changes: [{ field: 'rank', from: before.get(id)!.rank, to: rankText(rank) }],
      }));
      const recorded = await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records },
        Prisma.sql`
          UPDATE tasks t SET rank = m.rank, updated_at = ${CHANGE_TIME}
            FROM unnest(${changed.map((task) => task.id)}::uuid[], ${changed.map((task) => rankText(task.rank))}::text[]) AS m(id, rank)
           WHERE t.id = m.id AND t.project_id = ${projectId}::uuid`,
      );
      return taskIds.map((id) => recorded.tasks[id] ?? kept.get(id)!);
    });
  }
}

const RANKED = Prisma.sql`SELECT t.id::text, t.rank, t.deleted_at IS NULL AS live FROM tasks t`;

/**
 * The two statements that read the neighbours of the place (the tasks moved left out), nearest
 * first, RANK_WINDOW + 1 on each side (the window a rebalance may rewrite, and what bounds it).
 * Every task of the project counts, those in the trash too: they keep their ranks.
 */
function neighbours(projectId: string, taskIds: string[], where: Where): [Prisma.Sql, Prisma.Sql] {
  const others = Prisma.sql`t.project_id = ${projectId}::uuid AND t.id <> ALL(${taskIds}::uuid[])`;
  const anchorRank = (id: string) => Prisma.sql`(SELECT rank FROM tasks WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid)`;
  const side = (condition: Prisma.Sql, direction: 'ASC' | 'DESC') =>
    Prisma.sql`${RANKED} WHERE ${others} AND ${condition} ORDER BY t.rank ${Prisma.raw(direction)} LIMIT ${RANK_WINDOW + 1}`;
  if ('before' in where)
    return [side(Prisma.sql`t.rank < ${anchorRank(where.before)}`, 'DESC'), side(Prisma.sql`t.rank >= ${anchorRank(where.before)}`, 'ASC')];
  if ('after' in where)
    return [side(Prisma.sql`t.rank <= ${anchorRank(where.after)}`, 'DESC'), side(Prisma.sql`t.rank > ${anchorRank(where.after)}`, 'ASC')];
  const none = Prisma.sql`false`;
  return where.to === 'top' ? [side(none, 'DESC'), side(Prisma.sql`true`, 'ASC')] : [side(Prisma.sql`true`, 'DESC'), side(none, 'ASC')];
}

/** Whether the moved tasks already stand there, in that order: then the move changes nothing. */
function alreadyThere(ranks: bigint[], around: Neighbourhood): boolean {
  const lo = around.below[0]?.rank ?? -1n;
  const hi = around.above[0]?.rank ?? around.ceiling;
  return ranks.every((rank, i) => rank > lo && rank < hi && (i === 0 || rank > ranks[i - 1]));
}

/** The one place a move names (400 for none or several, or a place among the tasks moved). */
function placeOf(dto: MoveTaskDto, taskIds: string[]): Where {
  const given = (['before', 'after', 'to'] as const).filter((name) => dto[name] !== undefined);
  if (given.length !== 1) throw badRequest('validation_failed', 'send exactly one of before, after or to', given[1] ?? 'before');
  const anchor = dto.before ?? dto.after;
  if (anchor !== undefined && taskIds.includes(anchor)) {
    throw badRequest('validation_failed', 'a task cannot be placed against itself or another task that moves with it', given[0]);
  }
  return dto.before !== undefined ? { before: dto.before } : dto.after !== undefined ? { after: dto.after } : { to: dto.to! };
}
