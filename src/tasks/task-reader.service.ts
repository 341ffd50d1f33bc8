import { Injectable } from '@nestjs/common';
import { CursorCodec, CursorPosition } from '../common/pagination/cursor';
import { PageQueryDto } from '../common/pagination/page.dto';
import type { JsonText } from '../common/http/json-text';
import { PrismaService, PrismaTransaction } from '../database/prisma.service';
import { Prisma } from '../generated/prisma/client';
import type { TaskDetailDto, TaskDto } from './task.dto';
import { RememberedTotal, TaskListCache } from './task-list-cache';
import { isoTimestamp, TASK_VIEW_JOINS, taskJson } from './task-view.sql';

/** The two lists of tasks: the task list, newest created first, and the trash, most recently deleted first. */
export type TaskListOrder = 'created' | 'deleted';

const SORT_COLUMN = { created: 't.created_at', deleted: 't.deleted_at' } as const;
const CURSOR_KIND = { created: 'tasks', deleted: 'trash' } as const;

interface PageRow {
  /** The page's tasks as a JSON array, as PostgreSQL wrote it. */
  tasks: string;
  total: number;
  version: string;
  /** Sort timestamp and id of the last task shown, when more tasks follow it. */
  next_at: string | null;
  next_id: string | null;
}

/**
 * Reads tasks in their API shape. A page is one SQL statement (the page, its joins, the
 * total and the next cursor's position), so its cost does not grow with the page size or
 * with the depth of the cursor, and its JSON goes to the client as PostgreSQL wrote it.
 * A page or total that nothing changed since it was last read is not read again
 * (TaskListCache).
 */
@Injectable()
export class TaskReader {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cursors: CursorCodec,
    private readonly cache: TaskListCache,
  ) {}

  /**
   * A page of the project's tasks matching `where` (conditions on the task row `t`), as the
   * API answers it: `{tasks, nextCursor, total}`, with `limit` and `cursor` from the query.
   *
   * SQL statements: one, the page; or, when this page was answered before, one that reads
   * the project's version, and the page only if the version moved since.
   */
  async list<T extends { tasks: TaskDto[] }>(
    projectId: string,
    where: Prisma.Sql[],
    order: TaskListOrder,
    query: PageQueryDto,
  ): Promise<JsonText<T>> {
    const kind = CURSOR_KIND[order];
    const limit = query.limit ?? 50;
    const matches = Prisma.join([Prisma.sql`t.project_id = ${projectId}::uuid`, ...where], ' AND ');
    const listKey = `${order}\u0000${matches.text}\u0000${JSON.stringify(matches.values)}`;
    // JSON keeps "no cursor" (null) apart from an empty one (""), which is refused.
    const pageKey = `${listKey}\u0000${limit}\u0000${JSON.stringify(query.cursor ?? null)}`;

    // A remembered page's cursor was verified when the page was first read (a cursor that
    // fails is never remembered), so a remembered page skips the decoding.
    const remembered = this.cache.page(pageKey);
    if (remembered && remembered.version === (await this.version(projectId))) return remembered.body;

    const after = this.cursors.positionAfter(kind, query.cursor);
    const row = await this.readPage(projectId, matches, order, after, limit, remembered ?? this.cache.total(listKey));
    const nextCursor = row.next_at && row.next_id ? this.cursors.encode(kind, { at: new Date(row.next_at), id: row.next_id }) : null;
    const body = `{"tasks":${row.tasks},"nextCursor":${JSON.stringify(nextCursor)},"total":${row.total}}`;
    this.cache.remember(listKey, pageKey, { version: row.version, total: row.total, body });
    return body;
  }

  /** The project's task list version (TaskListCache); 0 until its tasks first change. */
  private async version(projectId: string): Promise<string> {
    const [row] = await this.prisma.$queryRaw<{ version: string }[]>`
      SELECT COALESCE((SELECT v.version FROM task_list_versions v WHERE v.project_id = ${projectId}::uuid), 0)::text AS version`;
    return row.version;
  }

  /**
   * The page, the total and the version they were read at, in one statement (one snapshot).
   * `known`: a total remembered for these filters; counted again only if the version moved.
   */
  private async readPage(
    projectId: string,
    matches: Prisma.Sql,
    order: TaskListOrder,
    after: CursorPosition | null,
    limit: number,
    known: RememberedTotal | undefined,
  ): Promise<PageRow> {
    const sortColumn = Prisma.raw(SORT_COLUMN[order]);
    // Keyset: the row comparison is served by the (project_id, <sort> DESC, id DESC) index.
    const keyset = after ? Prisma.sql`AND (${sortColumn}, t.id) < (${after.at}, ${after.id}::uuid)` : Prisma.empty;
    // `shown` holds one task more than the page, to know whether a next page exists.
    // PostgreSQL runs an uncorrelated subquery in a CASE branch only if that branch is
    // taken: the count runs only when the remembered total is missing or outdated.
    const [row] = await this.prisma.$queryRaw<PageRow[]>`
      WITH shown AS MATERIALIZED (
        SELECT t.*, ${sortColumn} AS sort_at, row_number() OVER (ORDER BY ${sortColumn} DESC, t.id DESC) AS position
          FROM (SELECT t.* FROM tasks t WHERE ${matches} ${keyset} ORDER BY ${sortColumn} DESC, t.id DESC LIMIT ${limit + 1}) t
      ),
      version AS (
        SELECT COALESCE((SELECT v.version FROM task_list_versions v WHERE v.project_id = ${projectId}::uuid), 0) AS version
      )
      SELECT version.version::text AS version,
             CASE WHEN version.version = ${known?.version ?? '-1'}::bigint THEN ${known?.total ?? 0}::int
                  ELSE (SELECT count(*)::int FROM tasks t WHERE ${matches}) END AS total,
             (SELECT COALESCE(json_agg(${taskJson({ trash: order === 'deleted' })} ORDER BY t.position), '[]'::json)::text
                FROM shown t ${TASK_VIEW_JOINS}
               WHERE t.position <= ${limit}) AS tasks,
             next.at AS next_at, next.id::text AS next_id
        FROM version
        LEFT JOIN (SELECT ${Prisma.raw(isoTimestamp('t.sort_at'))} AS at, t.id FROM shown t
                    WHERE t.position = ${limit} AND EXISTS (SELECT 1 FROM shown WHERE shown.position > ${limit})) next ON true`;
    return row;
  }

  /** A live task of the project in full, or null. Pass the transaction to read inside it. */
  async detail(projectId: string, taskId: string, db: PrismaService | PrismaTransaction = this.prisma): Promise<TaskDetailDto | null> {
    const rows = await db.$queryRaw<{ task: TaskDetailDto }[]>`
      WITH shown AS (
        SELECT t.* FROM tasks t WHERE t.id = ${taskId}::uuid AND t.project_id = ${projectId}::uuid AND t.deleted_at IS NULL
      )
      SELECT ${taskJson({ detail: true })} AS task FROM shown t ${TASK_VIEW_JOINS}`;
    return rows[0]?.task ?? null;
  }
}
