import { Injectable } from '@nestjs/common';
import { setMaxListeners } from 'node:events';

/** Whether the service is shutting down (SIGTERM, SIGINT): check `isDraining`, or wait on `signal`. */
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

  /** `Date.now()` by which the shutdown must be over (null until it starts): background work bounds its last waits by it. */
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
