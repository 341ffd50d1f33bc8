import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The Prometheus registry that GET /metrics answers, with prom-client's process and event-loop
 * metrics. One per application, not prom-client's global one: the tests start several apps in
 * one process, and a global registry refuses a metric registered twice. A module adds its own
 * metrics by naming this registry:
 *
 *   constructor(registry: MetricsRegistry) {
 *     this.appended = new Counter({ name: 'events_appended_total', help: '...', labelNames: ['type'], registers: [registry] });
 *   }
 *
 * A gauge whose value is read at scrape time takes a `collect()` (see database-metrics.ts).
 */
@Injectable()
export class MetricsRegistry extends Registry {
  constructor() {
    super();
    collectDefaultMetrics({ register: this });
  }
}
