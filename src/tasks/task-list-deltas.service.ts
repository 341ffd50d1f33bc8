import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { inBatches } from '../database/sql';

/** Deltas are kept this long: a total remembered longer ago is counted again. */
const KEEP_DELTAS_MS = 10 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 1000;
const PRUNE_BATCH = 10_000;

/**
 * Removes old task_list_deltas (schema.prisma says what they are) and raises each project's
 * `deltas_from` past what it removed, in the same statement, so that no total is ever brought
 * up to date from an incomplete list of changes.
 */
@Injectable()
export class TaskListDeltas implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(TaskListDeltas.name);
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly prisma: PrismaService) {}

  onApplicationBootstrap(): void {
    const run = () => void this.prune().catch((error: Error) => this.logger.warn(`Removing old task list deltas failed: ${error.message}`));
    this.timer = setInterval(run, PRUNE_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Removes the deltas older than `keepMs`, in batches; answers how many. */
  async prune(keepMs = KEEP_DELTAS_MS): Promise<number> {
    const before = new Date(Date.now() - keepMs).toISOString();
    return inBatches(PRUNE_BATCH, () =>
      this.prisma.write(async (tx) => {
        // One instance at a time: the marks of several projects are taken in one statement.
        if (!(await tx.tryLock('task-list-deltas'))) return 0;
        const [{ count }] = await tx.$queryRaw<{ count: number }[]>`
        WITH removed AS (
          DELETE FROM task_list_deltas
           WHERE id IN (SELECT id FROM task_list_deltas WHERE created_at < ${before}::timestamptz ORDER BY id LIMIT ${PRUNE_BATCH})
          RETURNING project_id, version
        ),
        marked AS (
          UPDATE task_list_versions v SET deltas_from = GREATEST(v.deltas_from, r.last)
            FROM (SELECT project_id, max(version) AS last FROM removed GROUP BY project_id) r
           WHERE v.project_id = r.project_id
        )
        SELECT count(*)::int AS count FROM removed`;
        return count;
      }),
    );
  }
}
