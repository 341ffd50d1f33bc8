import { Injectable } from '@nestjs/common';
import { CursorCodec, CursorPosition } from '../common/pagination/cursor';
import { PageQueryDto } from '../common/pagination/page.dto';
import { toPage } from '../common/pagination/page';
import { PrismaService, PrismaTransaction } from '../database/prisma.service';
import { Prisma } from '../generated/prisma/client';
import type { TaskDetailDto, TaskDto } from './task.dto';
import { TASK_VIEW_JOINS, taskJson } from './task-view.sql';

interface TaskPageRequest {
  /** Conditions on the task row `t`; the project and the live/trash condition included. */
  where: Prisma.Sql[];
  /** Newest created first (task list) or most recently deleted first (trash). */
  order: 'created' | 'deleted';
  after: CursorPosition | null;
  /** Rows to fetch: one more than the page shows, to know whether a next page exists. */
  take: number;
}

const CURSOR_KIND = { created: 'tasks', deleted: 'trash' } as const;

/**
 * Reads tasks in their API shape. A page is one SQL statement (the page, its joins and the
 * total), so its cost does not grow with the page size or with the depth of the cursor.
 */
@Injectable()
export class TaskReader {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * A page of a task list (the task list or the trash) as the API answers it:
   * `{tasks, nextCursor, total}`, with `limit` and `cursor` taken from the query.
   */
  async list<T extends TaskDto & { deletedAt?: string }>(
    where: Prisma.Sql[],
    order: 'created' | 'deleted',
    query: PageQueryDto,
  ): Promise<{ tasks: T[]; nextCursor: string | null; total: number }> {
    const kind = CURSOR_KIND[order];
    const limit = query.limit ?? 50;
    const after = query.cursor ? this.cursors.decode(kind, query.cursor) : null;
    const { total, tasks } = await this.page<T>({ where, order, after, take: limit + 1 });
    const page = toPage(tasks, limit, this.cursors, kind, (task) => ({
      at: new Date(order === 'created' ? task.createdAt : (task.deletedAt as string)),
      id: task.id,
    }));
    return { tasks: page.items, nextCursor: page.nextCursor, total };
  }

  private async page<T extends TaskDto>(request: TaskPageRequest): Promise<{ total: number; tasks: T[] }> {
    const sortColumn = Prisma.raw(request.order === 'created' ? 't.created_at' : 't.deleted_at');
    const where = Prisma.join(request.where, ' AND ');
    // Keyset: the row comparison is served by the (project_id, <sort> DESC, id DESC) index.
    const keyset = request.after ? Prisma.sql`AND (${sortColumn}, t.id) < (${request.after.at}, ${request.after.id}::uuid)` : Prisma.empty;
    const [row] = await this.prisma.$queryRaw<{ total: number; tasks: T[] }[]>`
      SELECT
        (SELECT count(*)::int FROM tasks t WHERE ${where}) AS total,
        (SELECT COALESCE(json_agg(page.task ORDER BY page.sort_at DESC, page.id DESC), '[]'::json)
           FROM (SELECT t.sort_at, t.id, ${taskJson({ trash: request.order === 'deleted' })} AS task
                   FROM (SELECT t.*, ${sortColumn} AS sort_at FROM tasks t
                          WHERE ${where} ${keyset}
                          ORDER BY ${sortColumn} DESC, t.id DESC
                          LIMIT ${request.take}) t
                 ${TASK_VIEW_JOINS}) page) AS tasks`;
    return row;
  }

  /** A live task of the project in full, or null. Pass the transaction to read inside it. */
  async detail(projectId: string, taskId: string, db: PrismaService | PrismaTransaction = this.prisma): Promise<TaskDetailDto | null> {
    const rows = await db.$queryRaw<{ task: TaskDetailDto }[]>`
      SELECT ${taskJson({ detail: true })} AS task
        FROM tasks t ${TASK_VIEW_JOINS}
       WHERE t.id = ${taskId}::uuid AND t.project_id = ${projectId}::uuid AND t.deleted_at IS NULL`;
    return rows[0]?.task ?? null;
  }
}
