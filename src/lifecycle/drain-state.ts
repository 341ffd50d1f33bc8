import { Injectable } from '@nestjs/common';
import { setMaxListeners } from 'node:events';

/**
 * Whether the service is shutting down, for every module that must react at once. Draining
 * starts on SIGTERM or SIGINT (graceful-shutdown.ts): /ready answers 503 from then on, answers
 * carry `Connection: close`, and whatever waits on `signal` (a held long poll, say) is woken.
 *
 *   constructor(private readonly drain: DrainState) {}
 *   if (this.drain.isDraining) ...                                  // a check
 *   const wake = AbortSignal.any([this.drain.signal, timeout]);      // a wait that ends when draining starts
 *   this.drain.signal.addEventListener('abort', stop, { once: true }); // a callback (remove it when done)
 */
@Injectable()
export class DrainState {
  private readonly controller = new AbortController();
  private shutdownDeadline: number | null = null;

  constructor() {
    // One listener per held request: no "possible leak" warning past 10.
    setMaxListeners(0, this.controller.signal);
  }

  get isDraining(): boolean {
    return this.controller.signal.aborted;
  }

  /** Aborted when draining starts; never reset (a process drains once). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * `Date.now()` by which the whole shutdown must be over (SHUTDOWN_TIMEOUT_MS after the
   * signal), null until draining starts: background work bounds its last waits with it.
   */
  get deadline(): number | null {
    return this.shutdownDeadline;
  }

  /** Starts draining (once; later calls change nothing). Listeners run synchronously, in the order they were added. */
  begin(deadline: number): void {
    if (this.isDraining) return;
    this.shutdownDeadline = deadline;
    this.controller.abort(new Error('The service is shutting down'));
  }
}
