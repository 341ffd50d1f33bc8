import { HttpStatus, Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { Problem } from '../common/errors/problem';
import type { JsonText } from '../common/http/json-text';
import { PrismaService } from '../database/prisma.service';
import { Prisma } from '../generated/prisma/client';
import { ChangeSignal } from './change-signal.service';
import type { EventFeedDto, EventFeedQueryDto } from './event.dto';
import { EVENT_JSON } from './event-view.sql';

interface FeedRow extends FeedBounds {
  events: string;
  returned: number;
  last: string | null;
  has_more: boolean;
}

/** What the project's event row says of its feed: its last sequence, and up to which one events were removed. */
export interface FeedBounds {
  last_sequence: string;
  pruned_through: string;
}

/** The bounds of a project's feed, as a SQL select list (0 and 0 before its first event). */
export function feedBoundsSql(projectId: string): Prisma.Sql {
  return Prisma.sql`
    COALESCE((SELECT last_sequence FROM event_sequences WHERE project_id = ${projectId}::uuid), 0)::text AS last_sequence,
    COALESCE((SELECT pruned_through FROM event_sequences WHERE project_id = ${projectId}::uuid), 0)::text AS pruned_through`;
}

/**
 * The feed's one selection of events, which the feed's pages and the stream's reads both use:
 * `columns` of the project's events after `after` (of `types` only, when given), oldest first,
 * at most `limit`; `e` names the events table. Served by the (project_id, sequence) key.
 */
export function eventsAfterSql(projectId: string, after: number, types: Iterable<string> | null, limit: number, columns: Prisma.Sql): Prisma.Sql {
  const ofTypes = types ? Prisma.sql`AND e.type IN (${Prisma.join([...types])})` : Prisma.empty;
  return Prisma.sql`
    SELECT ${columns} FROM events e
     WHERE e.project_id = ${projectId}::uuid AND e.sequence > ${after} ${ofTypes}
     ORDER BY e.sequence LIMIT ${limit}`;
}

/**
 * A read of the feed after `after` (given as the query parameter or header `field`) is
 * possible: not beyond its end (400, decisions.md section 20: a reader that starts ahead would
 * skip the events up to there), and not before what retention kept (410, section 13).
 */
export function assertReadableAfter(after: number, field: string, bounds: FeedBounds): void {
  if (BigInt(after) > BigInt(bounds.last_sequence)) {
    throw new Problem(
      HttpStatus.BAD_REQUEST,
      'validation_failed',
      `${field} is beyond the end of the feed: its last sequence is ${bounds.last_sequence}`,
      [{ field, message: `must be at most the last sequence, ${bounds.last_sequence}` }],
      { lastSequence: Number(bounds.last_sequence) },
    );
  }
  if (BigInt(after) < BigInt(bounds.pruned_through)) {
    throw new Problem(
      HttpStatus.GONE,
      'events_expired',
      `Events up to ${bounds.pruned_through} are no longer kept (EVENT_RETENTION_DAYS): resynchronise from the lists, then read from the current sequence`,
    );
  }
}

/** The change feed: a project's events after a sequence number, oldest first, with an optional long poll. */
@Injectable()
export class EventsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly signal: ChangeSignal,
  ) {}

  async feed(caller: Caller, query: EventFeedQueryDto): Promise<JsonText<EventFeedDto>> {
    const after = query.after ?? 0;
    const deadline = Date.now() + (query.wait ?? 0) * 1000;
    const types = query.types?.split(',');
    for (;;) {
      // Waiting starts before the read, so that a change committing in between still wakes it.
      const remaining = deadline - Date.now();
      const next = remaining > 0 ? this.signal.nextChange(caller.projectId, remaining) : null;
      const row = await this.read(caller.projectId, after, query.limit ?? 100, types);
      try {
        assertReadableAfter(after, 'after', row);
      } catch (problem) {
        next?.cancel();
        throw problem;
      }
      if (row.returned > 0 || !next) {
        next?.cancel();
        return `{"events":${row.events},"nextAfter":${row.last ?? after},"hasMore":${row.has_more}}`;
      }
      // Woken by a change of the project (it may not match `types`: look again), or at the deadline.
      await next.changed;
    }
  }

  /** One page of events and the feed's bounds, in one statement. */
  private async read(projectId: string, after: number, limit: number, types: string[] | undefined): Promise<FeedRow> {
    const [row] = await this.prisma.sql.$queryRaw<FeedRow[]>`
      WITH page AS (${eventsAfterSql(projectId, after, types ?? null, limit + 1, Prisma.sql`e.*`)}),
      shown AS (SELECT * FROM page ORDER BY sequence LIMIT ${limit})
      SELECT (SELECT COALESCE(json_agg(${EVENT_JSON} ORDER BY e.sequence), '[]'::json)::text FROM shown e) AS events,
             (SELECT count(*)::int FROM shown) AS returned,
             (SELECT max(sequence)::text FROM shown) AS last,
             (SELECT count(*) FROM page) > ${limit} AS has_more,
             ${feedBoundsSql(projectId)}`;
    return row;
  }
}
