import { Injectable } from '@nestjs/common';
import { CursorCodec, queryDigest, type ListQuery } from '../common/pagination/cursor';
import { PageQueryDto } from '../common/pagination/page.dto';
import type { JsonText } from '../common/http/json-text';
import { PrismaService } from '../database/prisma.service';
import { cte, statement, withCtes, type Sql } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import type { TaskDetailDto, TaskDto } from './task.dto';
import type { TaskListFilter } from './task-list-filters';
import { RememberedTotal, TaskListCache } from './task-list-cache';
import { isoTimestamp } from '../common/dates';
import { TASK_VIEW_CTES, TASK_VIEW_JOINS, taskJson } from './task-view.sql';
import { liveTextSearchCount, textSearchHits, textSearchRank, wordsKeptSince } from './finding/text-search';

/**
 * How lists of tasks are ordered: the task list newest created first (`created`, the
 * specification's order) or in backlog order (`rank`), and the trash most recently deleted first
 * (`deleted`); either, with a search, best match first (`relevance`, decisions.md section 25).
 * The first three are paged by keyset on an index of their own: `after` starts the index scan at
 * the cursor, `cursorAt` is the position a cursor keeps (a JSON array of text).
 */
export type TaskListOrder = 'created' | 'rank' | 'deleted' | { relevanceTo: string; list: 'tasks' | 'trash' };

interface ListOrder {
  /** The order in the cache's keys. */
  name: string;
  /** The rows it orders: the tasks, or the tasks with a column the order reads. */
  from: Prisma.Sql;
  orderBy: string;
  cursorAt: string;
  trash: boolean;
  after(cursors: CursorCodec, list: ListQuery): Prisma.Sql;
  cursor(cursors: CursorCodec, list: ListQuery, position: string[]): string;
}

const TASKS = Prisma.sql`tasks`;

/**
 * Newest first by a time, ties by id (`created_at` or `deleted_at`): the cursor keeps both. The
 * cursor is the list's (`kind`) and its query's (CursorCodec): `sort` is part of the query, so a
 * cursor of one order is refused by the other.
 */
function byTime(column: string, kind: 'tasks' | 'trash'): ListOrder {
  return {
    name: column,
    from: TASKS,
    orderBy: `${column} DESC, t.id DESC`,
    cursorAt: `json_build_array(${isoTimestamp(column)}, t.id)`,
    trash: kind === 'trash',
    after(cursors, list) {
      const after = cursors.positionAfter(kind, list);
      return after ? Prisma.sql`AND (${Prisma.raw(column)}, t.id) < (${after.at}, ${after.id}::uuid)` : Prisma.empty;
    },
    cursor: (cursors, list, [at, id]) => cursors.encode(kind, list, { at: new Date(at), id }),
  };
}

const ORDERS: Record<'created' | 'rank' | 'deleted', ListOrder> = {
  created: byTime('t.created_at', 'tasks'),
  deleted: byTime('t.deleted_at', 'trash'),
  // Ranks are unique in a project: the rank alone is the position.
  rank: {
    name: 't.rank',
    from: TASKS,
    orderBy: 't.rank',
    cursorAt: 'json_build_array(t.rank)',
    trash: false,
    after(cursors, list) {
      const after = cursors.keyAfter('tasks', list);
      return after === null ? Prisma.empty : Prisma.sql`AND t.rank > ${after}`;
    },
    cursor: (cursors, list, [rank]) => cursors.encodeKey('tasks', list, rank),
  },
};

/**
 * Best match first (textSearchRank), ties newest created first, then by id. No index holds a
 * score: every match is ranked, then the page taken after the cursor's (score, time, id). The
 * score travels as PostgreSQL writes a real, which reads back as the same real.
 */
function byRelevance(search: string, kind: 'tasks' | 'trash'): ListOrder {
  return {
    name: 'relevance',
    from: Prisma.sql`(SELECT t.*, ${textSearchRank(search)} AS search_rank FROM tasks t)`,
    orderBy: 't.search_rank DESC, t.created_at DESC, t.id DESC',
    cursorAt: `json_build_array(t.search_rank::text, ${isoTimestamp('t.created_at')}, t.id)`,
    trash: kind === 'trash',
    after(cursors, list) {
      const after = cursors.scoredAfter(kind, list);
      return after ? Prisma.sql`AND (t.search_rank, t.created_at, t.id) < (${after.score}::real, ${after.at}, ${after.id}::uuid)` : Prisma.empty;
    },
    cursor: (cursors, list, [score, at, id]) => cursors.encodeScored(kind, list, { score, at: new Date(at), id }),
  };
}

function listOrder(order: TaskListOrder): ListOrder {
  return typeof order === 'string' ? ORDERS[order] : byRelevance(order.relevanceTo, order.list);
}

/** A search with at most this many matching documents in the project takes its page from them (readPage). */
const FEW_SEARCH_MATCHES = 1000;

/** Beyond this many versions since a remembered total, counting again is the cheaper way. */
const MAX_VERSIONS_BY_DELTAS = 1000;

interface PageRow {
  /** The page's tasks as a JSON array, as PostgreSQL wrote it. */
  tasks: JsonText<TaskDto[]>;
  total: number;
  /** The version it was read at (TaskReader.version). */
  version: string;
  /** The list order's position of the last task shown (ListOrder.cursorAt), when more tasks follow it. */
  next: string | null;
  /** A search's matches, few when counted before, were more in the statement's snapshot (readPage). */
  overflowed: boolean;
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

  /** Page reads in flight, by page and version, so that identical ones share one. */
  private readonly reading = new Map<string, Promise<string>>();

  /**
   * A page of the project's tasks that `filter` selects, as the API answers it:
   * `{tasks, nextCursor, total}`, with `limit` and `cursor` from the query. `query` is the list's
   * whole validated query: the cursors it takes and gives belong to it (CursorCodec).
   *
   * SQL statements: one that reads the project's version, then, unless this page was answered
   * at that version already, one for the page. Identical reads that arrive while that page is
   * being read wait for it instead of reading it again (no stampede on a popular list after a
   * change): a read started after the version was read shows at least that version.
   */
  async list<T extends { tasks: TaskDto[] }>(
    projectId: string,
    filter: TaskListFilter,
    sort: TaskListOrder,
    query: PageQueryDto,
  ): Promise<JsonText<T>> {
    const limit = query.limit ?? 50;
    const matches = inProject(projectId, filter.conditions);
    const order = listOrder(sort);
    const listKey = `${order.name}\u0000${matches.text}\u0000${JSON.stringify(matches.values)}`;
    // JSON keeps "no cursor" (null) apart from an empty one (""), which is refused. The query's
    // digest too: a page (and its nextCursor) belongs to the query that asked for it, even where
    // two queries select the same rows (`q=` and no q), since cursors are bound to queries.
    const pageKey = `${listKey}\u0000${queryDigest({ query })}\u0000${limit}\u0000${JSON.stringify(query.cursor ?? null)}`;

    // A remembered page's cursor was verified when the page was first read (a cursor that
    // fails is never remembered), so a remembered page skips the decoding.
    const version = await this.version(projectId, filter.readsWords);
    // Looked up after the version read: a read that finished meanwhile has remembered its page.
    const remembered = this.cache.page(pageKey);
    if (remembered?.version === version) return remembered.body;

    const flight = `${pageKey}\u0000${version}`;
    const running = this.reading.get(flight);
    if (running) return running;
    const reading = this.readPage(projectId, matches, filter, order, { query }, limit, newest(remembered, this.cache.total(listKey)))
      .then((row) => {
        const nextCursor = row.next === null ? null : order.cursor(this.cursors, { query }, JSON.parse(row.next));
        const body = `{"tasks":${row.tasks},"nextCursor":${JSON.stringify(nextCursor)},"total":${row.total}}`;
        this.cache.remember(listKey, pageKey, { version: row.version, total: row.total, body });
        return body;
      })
      .finally(() => this.reading.delete(flight));
    this.reading.set(flight, reading);
    return reading;
  }

  /**
   * The version a list of the project is remembered at (TaskListCache): its task list version, 0
   * until its tasks first change; for a list that reads the search words, also its last event
   * sequence (`<version>.<sequence>`): a comment changes a task's words without raising the task
   * list version, but every change is a recorded event. Read before every list: prepared.
   */
  private async version(projectId: string, readsWords: boolean): Promise<string> {
    // Bigints, read as text (Column says why).
    const [row] = await this.prisma.preparedSql.rows(
      statement<{ version: string }>(Prisma.sql`
        SELECT ${listVersion(projectId, readsWords)} AS version`),
    );
    return row.version;
  }

  /**
   * The page, the total and the version they were read at, in one statement (one snapshot).
   * `known`: a total remembered for these filters at some version. When the version has not
   * moved since, it is the total; when it has, and the filters have `rowConditions` for the
   * task_list_deltas recorded since, the total is that one plus, for each delta, whether the
   * changed row matches now minus whether it matched before; otherwise every match is counted.
   * A list that reads the words is brought up to date so only while wordsKeptSince holds (no
   * description replaced, no comment changed, no purge).
   *
   * A search's page: the order's index walked until a page of matches is found, which is quick
   * when matches are many; when they are few, PostgreSQL, which cannot tell (it guesses a
   * prefix's share of the words), walked a whole large project (4 s at a million tasks). So the
   * project's search matches are counted first through the GIN index, up to FEW_SEARCH_MATCHES + 1,
   * and when they are no more than that, the page and the total are taken from them.
   */
  private async readPage(
    projectId: string,
    matches: Prisma.Sql,
    filter: TaskListFilter,
    order: ListOrder,
    list: ListQuery,
    limit: number,
    known: RememberedTotal | undefined,
    fewMatches?: boolean,
  ): Promise<PageRow> {
    const { rowConditions, readsWords, search, searchAlone } = filter;
    const { from, orderBy, cursorAt, after } = order;
    const sort = Prisma.raw(orderBy);
    // Keyset: the comparison is served by the order's index ((project_id, <sort> DESC, id DESC), or (project_id, rank)).
    const keyset = after(this.cursors, list);
    const knownKey = known?.version ?? '-1';
    // The task list version a remembered total was read at (its deltas follow it).
    // `<version>.<sequence>` (listVersion).
    const [knownVersion, knownSequence = '0'] = knownKey.split('.');
    const knownTotal = known?.total ?? 0;
    // A search with few matches takes its page and its total from them (the comment above). Which
    // way is decided before the statement, so that it holds only that way: a guarded other way
    // still started parallel workers (bench/results/postgresql-1m-finding-2026-11-28.md). The
    // matches are read again, up to one more than few (which keeps PostgreSQL's plan to a few):
    // if they are no longer few in this snapshot, the page is read the other way. Which way is a
    // choice of plan, not of answer (both are exact): a total remembered above few, at any version,
    // says the matches (at least the total) were many, and counting up to 1 001 of a broad search's
    // reads all its matches through the GIN index (20 ms of a third of 100 000 tasks). Should they
    // have become few since, this one page walks the order's index, and remembers a total that is few.
    fewMatches ??=
      search !== undefined &&
      !(known !== undefined && known.total > FEW_SEARCH_MATCHES) &&
      (await this.searchMatchesUpTo(projectId, search, FEW_SEARCH_MATCHES + 1)) <= FEW_SEARCH_MATCHES;
    const rows = fewMatches ? Prisma.sql`search_hits h JOIN ${from} t ON t.id = h.task_id` : Prisma.sql`${from} t`;
    const page = Prisma.sql`SELECT t.* FROM ${rows} WHERE ${matches} ${keyset} ORDER BY ${sort} LIMIT ${limit + 1}`;
    const hits =
      fewMatches && search !== undefined
        ? [cte('search_hits', { materialized: true })`${textSearchHits(projectId, search, FEW_SEARCH_MATCHES + 1)}`]
        : [];
    const overflowed = fewMatches ? Prisma.sql`(SELECT count(*) FROM search_hits) > ${FEW_SEARCH_MATCHES}` : Prisma.sql`false`;
    const countMatches = fewMatches
      ? Prisma.sql`(SELECT count(*)::int FROM search_hits h JOIN tasks t ON t.id = h.task_id WHERE ${matches})`
      : searchAlone && search !== undefined
        ? liveTextSearchCount(projectId, search)
        : Prisma.sql`(SELECT count(*)::int FROM tasks t WHERE ${matches})`;
    const byDeltas = rowConditions
      ? Prisma.sql`${knownVersion}::bigint >= version.deltas_from AND version.version - ${knownVersion}::bigint <= ${MAX_VERSIONS_BY_DELTAS} ${
          readsWords ? Prisma.sql`AND ${wordsKeptSince(projectId, knownVersion, knownSequence)}` : Prisma.empty
        }`
      : Prisma.sql`false`;
    const rowMatches = inProject(projectId, rowConditions ?? []);
    // `shown` holds one task more than the page, to know whether a next page exists.
    // PostgreSQL runs an uncorrelated subquery in a CASE branch only if that branch is
    // taken: the deltas are read, or the matches counted, only when the total must move.
    const [row] = await this.prisma.sql.rows(
      statement<PageRow>(withCtes([
        ...hits,
        cte('shown', { materialized: true })`
          SELECT t.*, ${Prisma.raw(cursorAt)}::text AS cursor_at, row_number() OVER (ORDER BY ${sort}) AS position
            FROM (${page}) t`,
        ...TASK_VIEW_CTES,
        cte('version')`
          SELECT COALESCE(v.version, 0) AS version, COALESCE(v.deltas_from, 0) AS deltas_from,
                 ${listVersion(projectId, readsWords, Prisma.sql`v.version`)} AS key
            FROM (SELECT 1) one LEFT JOIN task_list_versions v ON v.project_id = ${projectId}::uuid`,
      ])`
        SELECT version.key AS version,
               CASE WHEN version.key = ${knownKey} THEN ${knownTotal}::int
                    WHEN ${byDeltas}
                      THEN ${knownTotal}::int + (
                        SELECT COALESCE(sum(
                                 (SELECT count(*) FROM jsonb_populate_record(NULL::tasks, d.new_row) t WHERE ${rowMatches})
                               - (SELECT count(*) FROM jsonb_populate_record(NULL::tasks, d.old_row) t WHERE ${rowMatches})), 0)::int
                          FROM task_list_deltas d
                         WHERE d.project_id = ${projectId}::uuid AND d.version > ${knownVersion}::bigint)
                    ELSE ${countMatches} END AS total,
               (SELECT COALESCE(json_agg(${taskJson({ trash: order.trash })} ORDER BY t.position), '[]'::json)::text
                  FROM shown t ${TASK_VIEW_JOINS}
                 WHERE t.position <= ${limit}) AS tasks,
               next.cursor_at AS next,
               ${overflowed} AS overflowed
          FROM version
          LEFT JOIN (SELECT t.cursor_at FROM shown t
                      WHERE t.position = ${limit} AND EXISTS (SELECT 1 FROM shown WHERE shown.position > ${limit})) next ON true`),
    );
    if (row.overflowed) return this.readPage(projectId, matches, filter, order, list, limit, known, false);
    return row;
  }

  /** How many of the project's tasks, live or in the trash, `search` finds, counted up to `limit`. */
  private async searchMatchesUpTo(projectId: string, search: string, limit: number): Promise<number> {
    const [row] = await this.prisma.sql.rows(
      statement<{ matches: number }>(Prisma.sql`SELECT count(*)::int AS matches FROM (${textSearchHits(projectId, search, limit)}) h`),
    );
    return row.matches;
  }

  /** A live task of the project in full, or null. Pass the transaction to read inside it. */
  async detail(projectId: string, taskId: string, db: Sql = this.prisma.sql): Promise<TaskDetailDto | null> {
    const rows = await db.rows(
      statement<{ task: TaskDetailDto }>(
        withCtes([
          cte('shown')`SELECT t.* FROM tasks t WHERE t.id = ${taskId}::uuid AND t.project_id = ${projectId}::uuid AND t.deleted_at IS NULL`,
          ...TASK_VIEW_CTES,
        ])`SELECT ${taskJson({ detail: true })} AS task FROM shown t ${TASK_VIEW_JOINS}`,
      ),
    );
    return rows[0]?.task ?? null;
  }
}

/** The project's tasks `t` that meet every condition: a list's rows, and its deltas' row images. */
function inProject(projectId: string, conditions: Prisma.Sql[]): Prisma.Sql {
  return Prisma.join([Prisma.sql`t.project_id = ${projectId}::uuid`, ...conditions], ' AND ');
}

/**
 * TaskReader.version's value as SQL: the task list version (`taskListVersion`, the project's row
 * unless given), and for a list that reads the search words the event sequence.
 */
function listVersion(
  projectId: string,
  readsWords: boolean,
  taskListVersion = Prisma.sql`(SELECT v.version FROM task_list_versions v WHERE v.project_id = ${projectId}::uuid)`,
): Prisma.Sql {
  const tasks = Prisma.sql`COALESCE(${taskListVersion}, 0)::text`;
  if (!readsWords) return tasks;
  return Prisma.sql`${tasks} || '.' || COALESCE((SELECT e.last_sequence FROM event_sequences e WHERE e.project_id = ${projectId}::uuid), 0)::text`;
}

/** Of two remembered totals of one list, the one read at the later version (both versions of one shape: listVersion). */
function newest(a: RememberedTotal | undefined, b: RememberedTotal | undefined): RememberedTotal | undefined {
  if (!a || !b) return a ?? b;
  const [aParts, bParts] = [a.version, b.version].map((version) => version.split('.').map(BigInt));
  const later = aParts.findIndex((part, i) => part !== bParts[i]);
  return later === -1 || aParts[later] > bParts[later] ? a : b;
}
