import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { PrismaService } from '../database/prisma.service';
import { advisoryLock, statement, type SqlTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { ATTACHMENT_STORE, type AttachmentStore } from './storage/attachment-store';

/** The key of committed bytes; anything else a store lists (but tmp/) is not the service's and stays. */
const BYTES_KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/[0-9a-f]{64}$/;

/** Keys whose rows one statement looks for, in the sweep. */
const SWEEP_BATCH = 500;

/** The advisory lock under which a project's bytes are promoted, counted against the quota, and removed (docs/locking.md). */
export function attachmentsLock(projectId: string): Prisma.Sql {
  return advisoryLock(`attachments:${projectId}`);
}

/** The store key of a project's bytes: `<projectId>/<sha256>`. */
export function bytesKey(projectId: string, sha256: string): string {
  return `${projectId}/${sha256}`;
}

/**
 * When attachments' bytes go (decisions.md section 24): after the commit that removed their last
 * attachment (a deletion, a purge), and, for what a crash left behind (between that commit and the
 * removal, or an upload that never committed), by a sweep on a timer of everything older than
 * ATTACHMENT_ORPHAN_AGE without a row.
 *
 * Bytes are shared by the project's attachments of the same SHA-256, so a removal decides under
 * the project's `attachments:<project>` advisory lock, which an upload holds from before it
 * promotes its bytes until its row commits: a removal either runs first (the upload then writes
 * the bytes again) or sees the new row and keeps them. Sweeps on several instances at once are
 * safe for the same reason; they only repeat each other's work.
 */
@Injectable()
export class AttachmentBytes implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(AttachmentBytes.name);
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(ATTACHMENT_STORE) private readonly store: AttachmentStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.track(this.sweep()), this.config.attachmentSweepIntervalMs).unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.settled();
  }

  /** Once `tx` commits, removes the bytes of `sha256s` that no attachment of the project refers to any more. */
  releaseAfterCommit(tx: SqlTransaction, projectId: string, sha256s: string[]): void {
    if (sha256s.length === 0) return;
    tx.afterCommit(() => void this.track(this.release(projectId, [...new Set(sha256s)])));
  }

  /** Resolves when the removals started so far have ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /**
   * Removes every object older than the orphan age (`now` minus ATTACHMENT_ORPHAN_AGE) that no
   * row refers to: temporary ones, and committed bytes no attachment of their project names.
   */
  async sweep(now = new Date()): Promise<number> {
    const before = now.getTime() - this.config.attachmentOrphanAgeMs;
    let removed = 0;
    let batch: string[] = [];
    const check = async () => {
      removed += await this.removeUnreferenced(batch);
      batch = [];
    };
    for await (const object of this.store.list()) {
      if (object.modifiedAt.getTime() > before) continue;
      if (object.key.startsWith('tmp/')) {
        await this.store.remove(object.key);
        removed++;
        continue;
      }
      if (!BYTES_KEY.test(object.key)) continue;
      batch.push(object.key);
      if (batch.length >= SWEEP_BATCH) await check();
    }
    await check();
    return removed;
  }

  private async release(projectId: string, sha256s: string[]): Promise<void> {
    await this.removeUnreferenced(sha256s.map((sha256) => bytesKey(projectId, sha256)));
  }

  /** Of `keys` (`<projectId>/<sha256>`), removes those no attachment refers to, each decided under its project's lock. */
  private async removeUnreferenced(keys: string[]): Promise<number> {
    if (keys.length === 0) return 0;
    const pairs = keys.map((key) => key.split('/') as [string, string]);
    // One look first, without locks: most keys are in use and need nothing more.
    const used = await this.prisma.sql.rows(
      statement<{ key: string }>(Prisma.sql`
        SELECT k.project_id::text || '/' || k.sha256 AS key
          FROM unnest(${pairs.map(([projectId]) => projectId)}::uuid[], ${pairs.map(([, sha256]) => sha256)}::text[]) AS k(project_id, sha256)
         WHERE EXISTS (SELECT FROM attachments a WHERE a.project_id = k.project_id AND a.sha256 = k.sha256)`),
    );
    const inUse = new Set(used.map((row) => row.key));
    let removed = 0;
    for (const [projectId, sha256] of pairs.filter(([projectId, sha256]) => !inUse.has(bytesKey(projectId, sha256)))) {
      await this.prisma.write(async (tx) => {
        const [, [row]] = await tx.pipeline(
          attachmentsLock(projectId),
          statement<{ used: boolean }>(
            Prisma.sql`SELECT EXISTS (SELECT FROM attachments a WHERE a.project_id = ${projectId}::uuid AND a.sha256 = ${sha256}) AS used`,
          ),
        );
        // Under the lock, until this transaction ends: no upload can promote these bytes meanwhile.
        if (!row.used) {
          await this.store.remove(bytesKey(projectId, sha256));
          removed++;
        }
      });
    }
    return removed;
  }

  private async track(work: Promise<unknown>): Promise<void> {
    const done = work.then(
      () => undefined,
      (error: Error) => this.logger.warn(`Removing attachments' bytes failed (the next sweep tries again): ${error.message}`),
    );
    this.pending.add(done);
    await done;
    this.pending.delete(done);
  }
}
