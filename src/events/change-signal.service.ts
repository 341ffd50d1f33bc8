import { Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CHANGES_CHANNEL } from '../changes/change';
import { PrismaService } from '../database/prisma.service';
import { DrainState } from '../lifecycle/drain-state';

type Wake = () => void;

/**
 * Tells this process when a change of a project has committed, in any instance: ChangeLog
 * sends NOTIFY with the project id in the change's transaction, which the database delivers
 * at commit (LISTEN on PostgreSQL, through a connection of its own; PGlite's in-process
 * listen on the embedded engine). Long polls of the change feed wait on it, and so does the
 * webhook worker, without holding a database connection while they wait.
 */
@Injectable()
export class ChangeSignal implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly waiting = new Map<string, Set<Wake>>();
  private readonly everyChange = new Set<Wake>();
  private stopped = false;

  constructor(
    private readonly prisma: PrismaService,
    drain: DrainState,
  ) {
    // Draining: held long polls are answered now (the drain waits for requests in flight), and no new one waits.
    drain.signal.addEventListener('abort', () => this.stop(), { once: true });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.prisma.engine.listen(CHANGES_CHANNEL, (projectId) => this.changed(projectId));
  }

  onModuleDestroy(): void {
    this.stop();
  }

  private stop(): void {
    this.stopped = true;
    this.changed(null);
  }

  /**
   * `changed` resolves at the next committed change of the project, or after `ms`, whichever
   * comes first, or when shutting down; null once shutting down: nobody waits any more. Start
   * waiting before reading what you wait for, so that a change committed in between is not missed.
   */
  nextChange(projectId: string, ms: number): { changed: Promise<void>; cancel(): void } | null {
    if (this.stopped) return null;
    let wake!: Wake;
    const changed = new Promise<void>((resolve) => (wake = resolve));
    const timer = setTimeout(() => done(), ms);
    const waiters = this.waiting.get(projectId) ?? new Set<Wake>();
    this.waiting.set(projectId, waiters);
    const done = () => {
      clearTimeout(timer);
      waiters.delete(done);
      if (waiters.size === 0 && this.waiting.get(projectId) === waiters) this.waiting.delete(projectId);
      wake();
    };
    waiters.add(done);
    return { changed, cancel: done };
  }

  /** Calls `wake` after every committed change of any project (the webhook worker). */
  onEveryChange(wake: Wake): () => void {
    this.everyChange.add(wake);
    return () => this.everyChange.delete(wake);
  }

  /** `null`: notifications may have been missed, so every waiter looks again. */
  private changed(projectId: string | null): void {
    const projects = projectId === null ? [...this.waiting.keys()] : [projectId];
    for (const project of projects) for (const wake of [...(this.waiting.get(project) ?? [])]) wake();
    for (const wake of this.everyChange) wake();
  }
}
