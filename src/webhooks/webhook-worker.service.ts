import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PrismaService } from '../database/prisma.service';
import { closePendingDeliveries, WEBHOOK_DISABLED_ERROR } from './pending-deliveries';
import { EVENT_JSON } from '../events/event-view.sql';
import { ChangeSignal } from '../events/change-signal.service';
import { AttemptOutcome, AttemptReleased, WebhookSender } from './webhook-sender';

/** At most this many attempts run at once in one instance, and one claim takes at most this many deliveries. */
const MAX_IN_FLIGHT = 64;
const CLAIM_BATCH = 32;
/** A claimed delivery is leased for the attempt's timeout plus this; an instance that dies mid-attempt loses it then. */
const LEASE_MARGIN_MS = 30_000;
/** On shutdown, attempts in flight get this long to finish; the rest are released for another instance. */
const SHUTDOWN_GRACE_MS = 2_000;
/**
 * Finished attempts are written together: when this many are waiting, when none is left in
 * flight, or this long after the first one finished. (Writing each one at once made every
 * batch a batch of one: on PGlite, whose statements run on the service's own thread, that
 * capped the worker at one delivery per claim plus record, about 50 a second.)
 */
const RECORD_DELAY_MS = 20;
/** After a database error the worker tries again this much later. */
const RETRY_AFTER_ERROR_MS = 2_000;
/** A webhook whose every attempt has failed for this long is disabled (decisions.md section 14). */
export const DISABLE_AFTER_FAILING_DAYS = 5;

interface ClaimedDelivery {
  id: string;
  attempts: number;
  finalAttempt: boolean;
  url: string;
  secret: string;
  eventId: string;
  body: string;
}

interface FinishedAttempt {
  id: string;
  /** The lease it was claimed with: a row whose lease changed meanwhile was requeued by a redeliver. */
  lease: string;
  attemptedAt: string;
  succeeded: boolean;
  responseStatus: number | null;
  error: string | null;
  status: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: string | null;
}

/** What the worker has done since start, for metrics. */
export interface WebhookWorkerStats {
  attemptsSucceeded: number;
  attemptsFailed: number;
  /** Deliveries that ran out of attempts (or whose webhook was disabled at their turn). */
  deliveriesFailed: number;
  inFlight: number;
}

/**
 * Sends the outbox ChangeLog fills, in every instance. A claim is one statement (SKIP LOCKED, a
 * lease in `next_attempt_at`), so no transaction is held during HTTP and a dead instance's
 * lease simply expires (at least once). Woken by ChangeSignal or the next due retry; idle, silent.
 */
@Injectable()
export class WebhookWorker implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookWorker.name);
  private readonly sender: WebhookSender;
  private readonly inFlight = new Map<string, Promise<void>>();
  private finished: FinishedAttempt[] = [];
  private released: string[] = [];
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  private flushing: Promise<void> | null = null;
  private flushAgain = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private readonly release = new AbortController();
  private unsubscribe: (() => void) | undefined;
  private readonly counts = { attemptsSucceeded: 0, attemptsFailed: 0, deliveriesFailed: 0 };

  constructor(
    private readonly prisma: PrismaService,
    private readonly signal: ChangeSignal,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.sender = new WebhookSender({ timeoutMs: config.webhookTimeoutMs, allowPrivateUrls: config.webhookAllowPrivateUrls });
  }

  onApplicationBootstrap(): void {
    this.unsubscribe = this.signal.onDeliveriesQueued(() => this.wake());
    // Whatever was queued while no worker ran (a restart, a crash) is due now.
    this.wake();
  }

  /** Shutting down: no new claims. (beforeApplicationShutdown then settles the attempts in flight.) */
  onModuleDestroy(): void {
    this.stopping = true;
    clearTimeout(this.timer);
    this.unsubscribe?.();
  }

  /** Before the database closes: attempts in flight finish (for up to SHUTDOWN_GRACE_MS) or are released, and every result is written. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Stops the worker for good: what beforeApplicationShutdown does (tests use it to stop delivering while the app runs on). */
  stop(): Promise<void> {
    this.stopped ??= this.settle();
    return this.stopped;
  }

  private async settle(): Promise<void> {
    this.onModuleDestroy();
    await this.claiming;
    if (this.inFlight.size > 0) {
      let graceOver!: NodeJS.Timeout;
      await Promise.race([
        Promise.allSettled(this.inFlight.values()),
        new Promise((resolve) => (graceOver = setTimeout(resolve, SHUTDOWN_GRACE_MS))),
      ]);
      clearTimeout(graceOver);
      this.release.abort();
      await Promise.allSettled(this.inFlight.values());
    }
    await this.flush();
    await this.sender.close();
  }

  /** Counters since start, for metrics (cheap, in memory). */
  stats(): WebhookWorkerStats {
    return { ...this.counts, inFlight: this.inFlight.size };
  }

  /** Seconds since the oldest pending delivery was queued (0 when none): how far behind the webhooks are, across all instances. */
  async oldestPendingAgeSeconds(): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ age: number | null }[]>`
      SELECT EXTRACT(EPOCH FROM (now() - min(created_at)))::float8 AS age FROM webhook_deliveries WHERE status = 'pending'`;
    return Math.max(0, row.age ?? 0);
  }

  /** Looks for due deliveries now (a change queued some, a retry is due, or slots freed up). */
  wake(): void {
    if (this.stopping) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimWhileDue().finally(() => (this.claiming = null));
  }

  private async claimWhileDue(): Promise<void> {
    try {
      do {
        this.claimAgain = false;
        for (;;) {
          const wanted = Math.min(CLAIM_BATCH, MAX_IN_FLIGHT - this.inFlight.size);
          // (Nearly) full: finishing attempts wake the worker again, to claim a batch worth the statement.
          if (this.stopping || wanted <= 0 || (this.inFlight.size > 0 && wanted < CLAIM_BATCH / 2)) return;
          const { deliveries, nextDue, lease } = await this.claim(wanted);
          if (this.stopping) {
            this.released.push(...deliveries.map((delivery) => delivery.id));
            return;
          }
          for (const delivery of deliveries) this.start(delivery, lease);
          this.wakeAt(nextDue);
          if (deliveries.length < wanted) break;
        }
      } while (this.claimAgain && !this.stopping);
    } catch (error) {
      this.logger.warn(`Claiming webhook deliveries failed, trying again in ${RETRY_AFTER_ERROR_MS} ms: ${(error as Error).message}`);
      this.wakeAt(new Date(Date.now() + RETRY_AFTER_ERROR_MS));
    }
  }

  /**
   * One statement: leases up to `limit` due deliveries and reads what sending them needs (the
   * event's JSON as the feed serves it); closes as failed those whose webhook was disabled
   * meanwhile; and answers when the next pending delivery falls due, for the timer.
   */
  private async claim(limit: number): Promise<{ deliveries: ClaimedDelivery[]; nextDue: Date | null; lease: string }> {
    const now = new Date();
    const lease = new Date(now.getTime() + this.config.webhookTimeoutMs + LEASE_MARGIN_MS).toISOString();
    const [row] = await this.prisma.$queryRaw<{ claimed: ClaimedDelivery[]; closed: number; next_due: Date | null }[]>`
      WITH due AS (
        SELECT d.id FROM webhook_deliveries d
         WHERE d.status = 'pending' AND d.next_attempt_at <= ${now.toISOString()}::timestamptz
         ORDER BY d.next_attempt_at
         LIMIT ${limit}
         FOR UPDATE SKIP LOCKED
      ),
      claimed AS (
        UPDATE webhook_deliveries d
           SET next_attempt_at = CASE WHEN w.enabled THEN ${lease}::timestamptz END,
               status = CASE WHEN w.enabled THEN 'pending' ELSE 'failed' END,
               error = CASE WHEN w.enabled THEN d.error ELSE ${WEBHOOK_DISABLED_ERROR} END
          FROM due, webhooks w
         WHERE d.id = due.id AND w.id = d.webhook_id
        RETURNING d.id, d.event_id, d.attempts, d.final_attempt, w.url, w.secret, w.enabled
      )
      SELECT COALESCE(
               (SELECT json_agg(json_build_object(
                         'id', c.id, 'attempts', c.attempts, 'finalAttempt', c.final_attempt, 'url', c.url, 'secret', c.secret,
                         'eventId', e.id, 'body', (${EVENT_JSON})::text))
                  FROM claimed c JOIN events e ON e.id = c.event_id WHERE c.enabled),
               '[]'::json) AS claimed,
             (SELECT count(*)::int FROM claimed WHERE NOT enabled) AS closed,
             (SELECT min(next_attempt_at) FROM webhook_deliveries
               WHERE status = 'pending' AND next_attempt_at > ${now.toISOString()}::timestamptz) AS next_due`;
    this.counts.deliveriesFailed += row.closed;
    return { deliveries: row.claimed, nextDue: row.next_due, lease };
  }

  private start(delivery: ClaimedDelivery, lease: string): void {
    const attemptedAt = new Date();
    const attempt = this.sender
      .send(delivery, this.release.signal)
      .then((outcome) => void this.finished.push(this.resultOf(delivery, lease, attemptedAt, outcome)))
      .catch((error: unknown) => {
        if (error instanceof AttemptReleased) return void this.released.push(delivery.id);
        // A bug of ours, not the receiver's: logged, and counted as a failed attempt so that the schedule goes on.
        this.logger.error(`Webhook attempt failed unexpectedly: ${(error as Error).stack}`);
        this.finished.push(
          this.resultOf(delivery, lease, attemptedAt, { succeeded: false, responseStatus: null, error: 'internal error while sending' }),
        );
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        this.flushSoon();
      });
    this.inFlight.set(delivery.id, attempt);
  }

  /** The delivery after this attempt: succeeded; or retried after the schedule's next delay; or failed when none is left. */
  private resultOf(delivery: ClaimedDelivery, lease: string, attemptedAt: Date, outcome: AttemptOutcome): FinishedAttempt {
    const attempt = delivery.attempts + 1;
    const delay = delivery.finalAttempt ? undefined : this.config.webhookRetrySchedule[attempt - 1];
    const status = outcome.succeeded ? 'succeeded' : delay === undefined ? 'failed' : 'pending';
    if (outcome.succeeded) this.counts.attemptsSucceeded++;
    else this.counts.attemptsFailed++;
    if (status === 'failed') this.counts.deliveriesFailed++;
    return {
      id: delivery.id,
      lease,
      attemptedAt: attemptedAt.toISOString(),
      ...outcome,
      status,
      nextAttemptAt: status === 'pending' ? new Date(Date.now() + delay!).toISOString() : null,
    };
  }

  private flushSoon(): void {
    if (this.inFlight.size > 0 && this.finished.length + this.released.length < CLAIM_BATCH) {
      this.flushTimer ??= setTimeout(() => void this.flush(), RECORD_DELAY_MS);
      return;
    }
    void this.flush();
  }

  /** Writes the finished attempts and releases the released ones, a batch per statement; then looks for more work. */
  private flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.flushing) {
      this.flushAgain = true;
      return this.flushing;
    }
    this.flushing = (async () => {
      do {
        this.flushAgain = false;
        const finished = this.finished;
        const released = this.released;
        this.finished = [];
        this.released = [];
        try {
          if (finished.length > 0) await this.record(finished);
          if (released.length > 0) await this.releaseLeases(released);
        } catch (error) {
          // Their leases expire and they are sent again: at least once.
          this.logger.warn(`Recording ${finished.length + released.length} webhook attempts failed: ${(error as Error).message}`);
        }
      } while (this.flushAgain || this.finished.length > 0 || this.released.length > 0);
    })().finally(() => {
      this.flushing = null;
      this.wake();
    });
    return this.flushing;
  }

  /**
   * One statement for a batch of attempts: each delivery's attempt count, last attempt, answer,
   * next state; then each webhook's health. A success clears `failing_since`; a failure sets it
   * when unset; a webhook failing since DISABLE_AFTER_FAILING_DAYS before its latest attempt is
   * disabled, and its pending deliveries are closed (a second statement, rarely).
   */
  private async record(attempts: FinishedAttempt[]): Promise<void> {
    const disabled = await this.prisma.$queryRaw<{ id: string }[]>`
      WITH attempt AS (
        SELECT * FROM json_to_recordset(${JSON.stringify(attempts)}::json) AS a(
          id uuid, lease timestamptz, "attemptedAt" timestamptz, succeeded boolean, "responseStatus" int, error text,
          status text, "nextAttemptAt" timestamptz)
      ),
      updated AS (
        UPDATE webhook_deliveries d
           SET attempts = d.attempts + 1,
               last_attempt_at = a."attemptedAt",
               response_status = a."responseStatus",
               error = a.error,
               -- A redeliver during the attempt queued a new one (or a disable closed it): that stands,
               -- whatever this attempt's outcome (a redeliver queues an attempt whatever the state).
               status = CASE WHEN d.next_attempt_at = a.lease THEN a.status ELSE d.status END,
               next_attempt_at = CASE WHEN d.next_attempt_at = a.lease THEN a."nextAttemptAt" ELSE d.next_attempt_at END,
               final_attempt = CASE WHEN d.next_attempt_at = a.lease THEN false ELSE d.final_attempt END
          FROM attempt a
         WHERE d.id = a.id
        RETURNING d.webhook_id, a.succeeded, a."attemptedAt" AS attempted_at
      ),
      health AS (
        SELECT webhook_id, bool_or(succeeded) AS recovered, min(attempted_at) FILTER (WHERE NOT succeeded) AS first_failure,
               max(attempted_at) AS latest
          FROM updated GROUP BY webhook_id
      ),
      judged AS (
        SELECT w.id, h.recovered, COALESCE(w.failing_since, h.first_failure) AS failing_since,
               NOT h.recovered AND w.enabled
                 AND COALESCE(w.failing_since, h.first_failure) <= h.latest - make_interval(days => ${DISABLE_AFTER_FAILING_DAYS}::int) AS disable
          FROM health h JOIN webhooks w ON w.id = h.webhook_id
      ),
      changed AS (
        UPDATE webhooks w
           SET failing_since = CASE WHEN j.recovered THEN NULL ELSE j.failing_since END,
               enabled = w.enabled AND NOT j.disable
          FROM judged j
         WHERE w.id = j.id AND (j.disable OR (j.recovered AND w.failing_since IS NOT NULL) OR (NOT j.recovered AND w.failing_since IS NULL))
        RETURNING w.id, j.disable
      )
      SELECT id::text FROM changed WHERE disable`;
    if (disabled.length === 0) return;
    const ids = disabled.map((webhook) => webhook.id);
    this.logger.warn(`Disabled webhooks ${ids.join(', ')}: every attempt failed for ${DISABLE_AFTER_FAILING_DAYS} days`);
    this.counts.deliveriesFailed += await closePendingDeliveries(this.prisma.sql, ids);
  }

  /** Attempts cut short by a shutdown: due again at once (for another instance, or this one after its restart); not counted as attempts. */
  private async releaseLeases(ids: string[]): Promise<void> {
    const now = new Date().toISOString();
    await this.prisma.$executeRaw`
      UPDATE webhook_deliveries SET next_attempt_at = LEAST(next_attempt_at, ${now}::timestamptz)
       WHERE id IN (SELECT json_array_elements_text(${JSON.stringify(ids)}::json)::uuid) AND status = 'pending'`;
  }

  /** Wakes the worker at `due` (the next pending delivery, or a retry after an error). */
  private wakeAt(due: Date | null): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (due === null || this.stopping) return;
    // Capped: a timer can wait at most about 24 days, and an hour-long sleep costs one statement.
    const delay = Math.min(Math.max(0, due.getTime() - Date.now()) + 5, 60 * 60 * 1000);
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }
}
