import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { CursorCodec } from '../common/pagination/cursor';
import { PageQueryDto } from '../common/pagination/page.dto';
import { toPage } from '../common/pagination/page';
import { PrismaService } from '../database/prisma.service';
import type { FieldChangeDto, HistoryPageDto } from './history-entry.dto';
import { liveTaskNotFound } from '../tasks/live-task-not-found';

/** Reads task history; ChangeLog (src/changes) writes it, with the change it records. */
@Injectable()
export class HistoryService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cursors: CursorCodec,
  ) {}

  /** A live task's history, newest first, paginated like the task list. */
  async list(caller: Caller, taskId: string, query: PageQueryDto): Promise<HistoryPageDto> {
    const limit = query.limit ?? 50;
    // The task is part of the list's query: a cursor of one task's history is refused by another's.
    const list = { query, path: { taskId } };
    const after = this.cursors.positionAfter('history', list);
    const task = await this.prisma.task.findFirst({ where: { id: taskId, projectId: caller.projectId, deletedAt: null }, select: { id: true } });
    if (!task) throw await liveTaskNotFound(this.prisma.sql, caller.projectId, taskId);
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
    const page = toPage(rows, limit, this.cursors, 'history', list, (row) => ({ at: row.createdAt, id: row.id }));
    return {
      history: page.items.map((row) => ({
        id: row.id,
        createdAt: row.createdAt.toISOString(),
        actor: row.actor,
        action: row.action,
        // Stored as recorded: each value as the API writes its field (FieldValueDto).
        changes: row.changes as unknown as FieldChangeDto[],
      })),
      nextCursor: page.nextCursor,
    };
  }
}
