import { HttpStatus, Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Gauge } from 'prom-client';
import type { Request, Response } from 'express';
import type { Caller } from '../auth/caller';
import { invalidFields, Problem } from '../common/errors/problem';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PrismaService } from '../database/prisma.service';
import { Prisma } from '../generated/prisma/client';
import { HttpDrain } from '../lifecycle/http-drain';
import { HttpMetrics } from '../metrics/http-metrics';
import { MetricsRegistry } from '../metrics/metrics-registry';
import { ChangeSignal } from './change-signal.service';
import type { EventStreamQueryDto } from './event.dto';
import { EVENT_JSON } from './event-view.sql';
import { assertReadableAfter, eventsAfterSql, FeedBounds, feedBoundsSql } from './events.service';
import { InstanceStreamSlots, RedisStreamSlots, Slot, StreamSlots } from './stream-slots';
import { commentMessage, EVENT_STREAM_HEADERS, eventMessage, RECONNECT_AFTER_MS, retryMessage } from './server-sent-events';

/** Open streams a key may hold at once (decisions.md section 20): on each instance, or across them with REDIS_URL. */
export const STREAMS_PER_KEY = 10;
/** Events read by one statement, catching up or following. */
const PAGE = 1000;

/** How long an ended stream's client has to read what is left before its connection is destroyed. */
const END_GRACE_MS = 1_000;

/** An event as streams send it: the whole message framed once, shared by every stream that sends it. */
interface StreamedEvent {
  sequence: number;
  type: string;
  message: string;
}

interface EventRow {
  last_sequence: string;
  pruned_through: string;
  sequence: string | null;
  type: string | null;
  json: string | null;
}

/**
 * The change feed as Server-Sent Events (decisions.md section 20). A stream catches up on its own,
 * then follows its project's tail: one per project and process (ProjectTail), woken by
 * ChangeSignal, reading new events once for all the project's streams. An idle stream holds no
 * database connection.
 */
@Injectable()
export class EventStreams implements OnApplicationShutdown {
  private readonly logger = new Logger(EventStreams.name);
  private readonly streams = new Set<EventStream>();
  private readonly slots: StreamSlots;
  private readonly tails = new Map<string, ProjectTail>();
  /** While streams are open, every keep-alive interval: renews their slots, and looks for keys revoked since (on any instance). */
  private revocationCheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly prisma: PrismaService,
    private readonly signal: ChangeSignal,
    private readonly drain: HttpDrain,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly httpMetrics: HttpMetrics,
    registry: MetricsRegistry,
  ) {
    this.slots = config.redisUrl ? new RedisStreamSlots(config.redisUrl, config.eventStreamKeepAliveMs) : new InstanceStreamSlots();
    const streams = this.streams;
    new Gauge({
      name: 'event_streams_open',
      help: 'Event streams (GET /api/v1/events/stream) open in this process',
      registers: [registry],
      collect() {
        this.set(streams.size);
      },
    });
  }

  /**
   * Checks the request, then starts the stream on `res` and answers once it has started: the
   * stream goes on until the client leaves or the service shuts down. Every refusal (400, 410,
   * 429) is thrown before anything is written.
   */
  async open(caller: Caller, query: EventStreamQueryDto, lastEventId: string | undefined, req: Request, res: Response): Promise<void> {
    const start = lastEventId?.trim() ? { after: parseLastEventId(lastEventId), field: 'Last-Event-ID' } : { after: query.after, field: 'after' };
    const types: ReadonlySet<string> | null = query.types ? new Set(query.types.split(',')) : null;
    const slot = await this.takeSlot(caller.keyId);
    let started = false;
    try {
      const [bounds] = await this.prisma.sql.$queryRaw<FeedBounds[]>`SELECT ${feedBoundsSql(caller.projectId)}`;
      // Without a position, only what commits from now on.
      const after = start.after ?? Number(bounds.last_sequence);
      assertReadableAfter(after, start.field, bounds);
      const stream = new EventStream(caller.projectId, slot, after, types, res, this.config, this, () => this.forget(stream));
      started = true;
      this.httpMetrics.untimed(res);
      this.streams.add(stream);
      this.revocationCheck ??= setInterval(() => this.everyKeepAlive(), this.config.eventStreamKeepAliveMs).unref();
      this.tailOf(caller.projectId, Number(bounds.last_sequence)).streams.add(stream);
      stream.start(req.method === 'HEAD');
      // Ended at once if draining has started, or as soon as it does.
      if (!stream.ended) stream.stopHolding = this.drain.holdOpen(res, () => stream.end());
      if (!stream.ended) void stream.catchUp();
    } finally {
      if (!started) this.slots.release(slot);
    }
  }

  /**
   * The events of the project after `after`, oldest first, at most PAGE (of `types` only, when
   * given), with the feed's bounds as the same snapshot saw them.
   */
  async read(projectId: string, after: number, types: ReadonlySet<string> | null): Promise<{ events: StreamedEvent[]; bounds: FeedBounds }> {
    const rows = await this.prisma.sql.$queryRaw<EventRow[]>`
      SELECT b.last_sequence, b.pruned_through, e.sequence::text AS sequence, e.type, e.json
        FROM (SELECT ${feedBoundsSql(projectId)}) b
        LEFT JOIN LATERAL (${eventsAfterSql(projectId, after, types, PAGE, Prisma.sql`e.sequence, e.type, ${EVENT_JSON}::text AS json`)}) e ON true
       ORDER BY e.sequence`;
    const events = rows.flatMap((row) => {
      if (row.sequence === null) return [];
      const sequence = Number(row.sequence);
      return [{ sequence, type: row.type!, message: eventMessage(sequence, row.type!, row.json!) }];
    });
    return { events, bounds: rows[0] };
  }

  failed(what: string, error: unknown): void {
    this.logger.warn(
      `${what} failed; its streams end (clients reconnect with Last-Event-ID): ${error instanceof Error ? error.message : String(error)}`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.slots.close();
  }

  private everyKeepAlive(): void {
    this.slots.renew([...this.streams].map((stream) => stream.slot));
    void this.endRevoked();
  }

  /**
   * Ends the streams of keys revoked since they opened, within one keep-alive interval
   * (EVENT_STREAM_KEEP_ALIVE_MS) of the revocation, whichever instance wrote it: one query per
   * interval and process, for all its streams. A reconnect is then 401, as any request.
   */
  private async endRevoked(): Promise<void> {
    const keyIds = [...new Set([...this.streams].map((stream) => stream.slot.keyId))];
    if (keyIds.length === 0) return;
    try {
      const revoked = await this.prisma.sql.$queryRaw<{ id: string }[]>`
        SELECT id::text AS id FROM api_keys
         WHERE id IN (${Prisma.join(keyIds.map((id) => Prisma.sql`${id}::uuid`))}) AND revoked_at IS NOT NULL`;
      const ids = new Set(revoked.map((key) => key.id));
      for (const stream of [...this.streams]) if (ids.has(stream.slot.keyId)) stream.end();
    } catch (error) {
      this.logger.warn(`Looking for revoked keys of open streams failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private tailOf(projectId: string, end: number): ProjectTail {
    let tail = this.tails.get(projectId);
    if (!tail) this.tails.set(projectId, (tail = new ProjectTail(projectId, end, this, this.signal)));
    return tail;
  }

  private forget(stream: EventStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0) {
      clearInterval(this.revocationCheck);
      this.revocationCheck = undefined;
    }
    this.slots.release(stream.slot);
    const tail = this.tails.get(stream.projectId);
    if (tail?.streams.delete(stream) && tail.streams.size === 0) {
      tail.close();
      this.tails.delete(stream.projectId);
    }
  }

  private async takeSlot(keyId: string): Promise<Slot> {
    const slot = await this.slots.take(keyId, STREAMS_PER_KEY);
    if (slot) return slot;
    throw new Problem(
      HttpStatus.TOO_MANY_REQUESTS,
      'rate_limited',
      `This key already holds ${STREAMS_PER_KEY} open event streams, the most a key may: close one first`,
      undefined,
      {},
      { 'Retry-After': String(RECONNECT_AFTER_MS / 1000) },
    );
  }
}

/** Last-Event-ID as an EventSource sends it back: the id of the last event it received, a sequence number. */
function parseLastEventId(value: string): number {
  const text = value.trim();
  if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw invalidFields('validation_failed', [{ field: 'Last-Event-ID', message: 'must be the id of an event of this stream (an integer from 0)' }]);
  }
  return Number(text);
}

/** One open stream: its position in the feed (the last sequence it has covered, sent or filtered out) and its response. */
class EventStream {
  ended = false;
  stopHolding: () => void = () => undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  /** While catching up from the database, the tail's events are left to the catch-up, which reads again if any came. */
  private catchingUp = false;
  private behind = false;
  /** Every listener and timer the stream adds is removed when it ends (test/event-stream.e2e-spec.ts counts them). */
  private readonly onClose = () => this.end();
  /** Resolves the catch-up's wait for 'drain', if it waits. */
  private wakeWriter: (() => void) | null = null;
  /** The bytes the socket had sent at the last keep-alive. */
  private sentAtKeepAlive = -1;

  constructor(
    readonly projectId: string,
    readonly slot: Slot,
    private position: number,
    private readonly types: ReadonlySet<string> | null,
    private readonly res: Response,
    private readonly config: Pick<AppConfig, 'eventStreamKeepAliveMs' | 'eventStreamMaxUnreadBytes'>,
    private readonly streams: EventStreams,
    private readonly onEnd: () => void,
  ) {}

  start(headOnly: boolean): void {
    for (const [name, value] of Object.entries(EVENT_STREAM_HEADERS)) this.res.setHeader(name, value);
    this.res.writeHead(200);
    this.res.once('close', this.onClose);
    if (headOnly || this.res.destroyed) return this.end();
    this.res.write(retryMessage(RECONNECT_AFTER_MS));
    this.keepAlive = setInterval(() => this.keepingAlive(), this.config.eventStreamKeepAliveMs).unref();
  }

  /** Reads and sends what the database has after the position, until a read finds the end. */
  async catchUp(): Promise<void> {
    this.catchingUp = true;
    try {
      do {
        this.behind = false;
        for (;;) {
          const { events, bounds } = await this.streams.read(this.projectId, this.position, this.types);
          if (this.ended) return;
          // Removed by EVENT_RETENTION_DAYS before this stream read them: reconnecting answers 410.
          if (this.position < Number(bounds.pruned_through)) return this.end();
          // One event at a time as the client reads: what waits in memory stays near the socket's
          // buffer size, whatever the size of a page (a stalled client is cut off by the keep-alive).
          for (const event of events) {
            this.send(event);
            await this.writable();
            if (this.ended) return;
          }
          if (events.length < PAGE) {
            // Everything up to the end that read saw is covered, also what `types` left out.
            this.position = Math.max(this.position, Number(bounds.last_sequence));
            break;
          }
        }
      } while (this.behind && !this.ended);
    } catch (error) {
      this.streams.failed('Reading events for a stream', error);
      this.end();
    } finally {
      this.catchingUp = false;
    }
  }

  /** The tail's new events: all of the project's after `from`, in order. */
  follow(from: number, events: StreamedEvent[]): void {
    if (this.ended || events.length === 0) return;
    if (this.catchingUp) {
      this.behind = true;
      return;
    }
    // Events between the position and `from` came before this stream followed the tail: read them first.
    if (from > this.position) return void this.catchUp();
    for (const event of events) if (event.sequence > this.position) this.send(event);
  }

  /**
   * Ends the answer. `cut`: the client is too far behind, and its connection is destroyed
   * rather than left holding the buffer. Otherwise a client with bytes still unread gets
   * END_GRACE_MS to read them before the same happens (a shutdown must not wait for it).
   */
  end(cut = false): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
    this.res.off('close', this.onClose);
    this.wakeWriter?.();
    this.stopHolding();
    this.onEnd();
    if (cut) return void this.res.destroy();
    this.res.end();
    if (this.res.writableFinished || this.res.destroyed) return;
    const cutOff = setTimeout(() => this.res.writableFinished || this.res.destroy(), END_GRACE_MS).unref();
    this.res.once('close', () => clearTimeout(cutOff));
  }

  /** Until the client has read what is buffered (or the stream ended): the catch-up sends its next event only then. */
  private writable(): Promise<void> {
    if (!this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      this.wakeWriter = () => {
        this.res.off('drain', this.wakeWriter!);
        this.wakeWriter = null;
        resolve();
      };
      this.res.once('drain', this.wakeWriter);
    });
  }

  /** The keep-alive comment; a client that has read nothing since the last one while bytes wait for it is cut off. */
  private keepingAlive(): void {
    // Bytes the socket has passed on to the kernel: bytesWritten alone also counts what still waits in its buffer, the keep-alive included.
    const socket = this.res.socket;
    const sent = socket ? socket.bytesWritten - socket.writableLength : 0;
    if (this.res.writableNeedDrain && sent === this.sentAtKeepAlive) return this.end(true);
    this.sentAtKeepAlive = sent;
    this.write(commentMessage('keep-alive'));
  }

  private send(event: StreamedEvent): void {
    this.position = event.sequence;
    if (!this.types || this.types.has(event.type)) this.write(event.message);
  }

  private write(text: string): void {
    if (this.ended) return;
    this.res.write(text);
    // A client this far behind is cut off (it reconnects with its Last-Event-ID and reads on from there).
    if (this.res.writableLength > this.config.eventStreamMaxUnreadBytes) this.end(true);
  }
}

/**
 * A project's events as they commit, read once for all of the project's streams in this
 * process. Each committed change (or a missed notification) wakes it; it reads every event
 * after the last one it handed out, and hands them out in order. Reads never overlap: a wake
 * during one makes another follow it.
 */
class ProjectTail {
  readonly streams = new Set<EventStream>();
  private reading = false;
  private again = false;
  private readonly stopFollowing: () => void;

  constructor(
    private readonly projectId: string,
    private position: number,
    private readonly reader: EventStreams,
    signal: ChangeSignal,
  ) {
    this.stopFollowing = signal.onChange(projectId, () => void this.readNew());
  }

  close(): void {
    this.stopFollowing();
  }

  private async readNew(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        for (let more = true; more && this.streams.size > 0;) {
          const from = this.position;
          const { events } = await this.reader.read(this.projectId, from, null);
          if (events.length > 0) this.position = events[events.length - 1].sequence;
          for (const stream of [...this.streams]) stream.follow(from, events);
          more = events.length === PAGE;
        }
      } while (this.again && this.streams.size > 0);
    } catch (error) {
      this.reader.failed("Reading a project's new events", error);
      for (const stream of [...this.streams]) stream.end();
    } finally {
      this.reading = false;
    }
  }
}
