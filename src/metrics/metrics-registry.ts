import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The Prometheus registry of the application, which GET /metrics answers together with the
 * process metrics. One per application, not prom-client's global one: the tests start several
 * apps in one process, and a global registry refuses a metric registered twice. A module adds
 * its own metrics by naming this registry:
 *
 *   constructor(registry: MetricsRegistry) {
 *     this.appended = new Counter({ name: 'events_appended_total', help: '...', labelNames: ['type'], registers: [registry] });
 *   }
 *
 * A gauge whose value is read at scrape time takes a `collect()` (see database-metrics.ts).
 */
@Injectable()
export class MetricsRegistry extends Registry {
  /** The text GET /metrics answers: this application's metrics and the process's. */
  exposition(): Promise<string> {
    return Registry.merge([processMetrics(), this]).metrics();
  }
}

let processRegistry: Registry | null = null;

/**
 * prom-client's process and event-loop metrics (CPU, memory, handles, heap, GC, event-loop
 * lag) belong to the process, not to an application: collected once, so that their collectors
 * (a GC observer, an event-loop monitor, which cannot be stopped) do not pile up with every
 * application a test process starts.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}
