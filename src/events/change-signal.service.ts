import { Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CHANGES_CHANNEL, WEBHOOK_DELIVERIES_QUEUED } from '../changes/change';
import { PrismaService } from '../database/prisma.service';
import { DrainState } from '../lifecycle/drain-state';

type Wake = () => void;

/**
 * Tells this process when a project's change has committed in any instance (NOTIFY, delivered
 * at commit), so that long polls, streams and the webhook worker wait without a connection.
 */
@Injectable()
export class ChangeSignal implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly waiting = new Map<string, Set<Wake>>();
  private readonly deliveriesQueued = new Set<Wake>();
  private stopped = false;

  constructor(
    private readonly prisma: PrismaService,
    drain: DrainState,
  ) {
    // Draining: held long polls are answered now (the drain waits for requests in flight), and no new one waits.
    drain.signal.addEventListener('abort', () => this.stop(), { once: true });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.prisma.engine.listen(CHANGES_CHANNEL, (payload) => this.changed(payload));
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
    const stop = this.addWaiter(projectId, () => done());
    const done = () => {
      clearTimeout(timer);
      stop();
      wake();
    };
    return { changed, cancel: done };
  }

  /**
   * Calls `wake` after every committed change of the project, and whenever notifications may
   * have been missed, until the function it answers is called (event streams, which follow a
   * project for as long as they are open).
   */
  onChange(projectId: string, wake: Wake): () => void {
    return this.addWaiter(projectId, wake);
  }

  /** How many are waiting on the project's changes (tests check that every waiter is removed). */
  waitersOf(projectId: string): number {
    return this.waiting.get(projectId)?.size ?? 0;
  }

  /**
   * Calls `wake` after every committed change, of any project, that queued webhook deliveries,
   * and after a redeliver (the webhook worker). Answers the function that stops it.
   */
  onDeliveriesQueued(wake: Wake): () => void {
    this.deliveriesQueued.add(wake);
    return () => this.deliveriesQueued.delete(wake);
  }

  /** Adds a waiter for the project's changes; answers the function that removes it (and the project's set, once empty). */
  private addWaiter(projectId: string, wake: Wake): () => void {
    let waiters = this.waiting.get(projectId);
    if (!waiters) this.waiting.set(projectId, (waiters = new Set()));
    // Its own function per call, so that the same `wake` added twice is removed once per call.
    const waiter = () => wake();
    waiters.add(waiter);
    return () => {
      waiters.delete(waiter);
      if (waiters.size === 0 && this.waiting.get(projectId) === waiters) this.waiting.delete(projectId);
    };
  }

  /** `payload` as ChangeLog sends it (change.ts); `null`: notifications may have been missed, so every waiter looks again. */
  private changed(payload: string | null): void {
    const queued = payload === null || payload.endsWith(WEBHOOK_DELIVERIES_QUEUED);
    const projectId = payload === null ? null : queued ? payload.slice(0, -WEBHOOK_DELIVERIES_QUEUED.length) : payload;
    const projects = projectId === null ? [...this.waiting.keys()] : projectId ? [projectId] : [];
    for (const project of projects) for (const wake of [...(this.waiting.get(project) ?? [])]) wake();
    if (queued) for (const wake of this.deliveriesQueued) wake();
  }
}
