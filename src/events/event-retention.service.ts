import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PrismaService } from '../database/prisma.service';
import { inBatches } from '../database/sql';

/** How often old events are looked for, and how many one statement removes. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;
const PRUNE_BATCH = 5000;

/**
 * EVENT_RETENTION_DAYS (decisions.md section 13): events older than that are removed, and each
 * project remembers up to which sequence it lost them, so that a feed read from before that
 * point is 410 events_expired rather than a silent gap. Unset: events are kept forever.
 */
@Injectable()
export class EventRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EventRetention.name);
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.eventRetentionDays === null) return;
    const run = () => void this.prune().catch((error: Error) => this.logger.warn(`Removing old events failed: ${error.message}`));
    this.timer = setInterval(run, PRUNE_EVERY_MS).unref();
    run();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Removes the events older than the retention period, in batches; answers how many. */
  async prune(now = new Date()): Promise<number> {
    const days = this.config.eventRetentionDays;
    if (days === null) return 0;
    const cutoff = new Date(now.getTime() - days * 24 * 60 * 60 * 1000).toISOString();
    return inBatches(PRUNE_BATCH, () =>
      this.prisma.write(async (tx) => {
        // One instance at a time: the marks of several projects are taken in one statement.
        if (!(await tx.tryLock('event-retention'))) return 0;
        const [{ count }] = await tx.$queryRaw<{ count: number }[]>`
          WITH doomed AS (
            SELECT id FROM events WHERE occurred_at < ${cutoff}::timestamptz ORDER BY occurred_at LIMIT ${PRUNE_BATCH}
          ),
          removed AS (
            DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING e.project_id, e.sequence
          ),
          marked AS (
            UPDATE event_sequences s SET pruned_through = GREATEST(s.pruned_through, r.last)
              FROM (SELECT project_id, max(sequence) AS last FROM removed GROUP BY project_id) r
             WHERE s.project_id = r.project_id
          )
          SELECT count(*)::int AS count FROM removed`;
        return count;
      }),
    );
  }
}
