import { Injectable } from '@nestjs/common';
import { isDeepStrictEqual } from 'node:util';
import type { Caller } from '../auth/caller';
import { notFound } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import { CursorCodec } from '../common/pagination/cursor';
import { PageQueryDto } from '../common/pagination/page.dto';
import { toPage } from '../common/pagination/page';
import { PrismaService, PrismaTransaction } from '../database/prisma.service';
import type { FieldChangeDto, HistoryPageDto } from './history-entry.dto';

export type HistoryAction = 'created' | 'updated' | 'deleted' | 'restored' | 'dependency_added' | 'dependency_removed';

/** One field's change, in the API's names and values. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export interface HistoryRecord {
  taskId: string;
  action: HistoryAction;
  changes?: FieldChange[];
}

/** Who made a change: a key, or the product's app (sprint closing). */
export const APP_ACTOR = 'App';

/**
 * The one place that writes task history. Services call `record` inside the
 * transaction of the change itself, so a change and its entry commit together.
 */
@Injectable()
export class HistoryService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cursors: CursorCodec,
  ) {}

  async record(tx: PrismaTransaction, entry: { projectId: string; actor: string; at: Date; records: HistoryRecord[] }): Promise<void> {
    if (entry.records.length === 0) return;
    // One statement for all the records; raw SQL because a Prisma createMany first goes
    // through Prisma's query compiler, which costs more CPU than the insert (README.md, Performance).
    const rows = entry.records.map((record) => ({ task_id: record.taskId, action: record.action, changes: record.changes ?? [] }));
    await tx.$executeRaw`
      INSERT INTO history_entries (project_id, task_id, actor, action, changes, created_at)
      SELECT ${entry.projectId}::uuid, r.task_id, ${entry.actor}, r.action, r.changes, ${entry.at.toISOString()}::timestamptz
        FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(task_id uuid, action text, changes json)`;
  }

  /** A live task's history, newest first, paginated like the task list. */
  async list(caller: Caller, taskId: string, query: PageQueryDto): Promise<HistoryPageDto> {
    const limit = query.limit ?? 50;
    const after = this.cursors.positionAfter('history', query.cursor);
    const task = isUuid(taskId)
      ? await this.prisma.task.findFirst({ where: { id: taskId, projectId: caller.projectId, deletedAt: null }, select: { id: true } })
      : null;
    if (!task) throw notFound('Task');
    const rows = await this.prisma.historyEntry.findMany({
      where: {
        taskId,
        projectId: caller.projectId,
        // Keyset: the redundant `lte` bound lets the index serve the OR below.
        ...(after && { createdAt: { lte: after.at }, OR: [{ createdAt: { lt: after.at } }, { createdAt: after.at, id: { lt: after.id } }] }),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: { id: true, createdAt: true, actor: true, action: true, changes: true },
    });
    const page = toPage(rows, limit, this.cursors, 'history', (row) => ({ at: row.createdAt, id: row.id }));
    return {
      history: page.items.map((row) => ({
        id: row.id,
        createdAt: row.createdAt.toISOString(),
        actor: row.actor,
        action: row.action,
        // Stored as recorded: each value a string, a list of ids, or null (FieldChangeDto).
        changes: row.changes as unknown as FieldChangeDto[],
      })),
      nextCursor: page.nextCursor,
    };
  }
}

/** The fields whose value differs between `before` and `after`, for `after`'s fields. */
export function changesBetween<T extends object>(before: T, after: Partial<T>): FieldChange[] {
  const from = before as Record<string, unknown>;
  return Object.entries(after)
    .filter(([field, to]) => !isDeepStrictEqual(from[field], to))
    .map(([field, to]) => ({ field, from: from[field], to }));
}
