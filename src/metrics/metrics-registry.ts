import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The application's Prometheus registry (a module's metrics name it in `registers`), not
 * prom-client's global one: tests start several apps in one process.
 */
@Injectable()
export class MetricsRegistry extends Registry {
  /** The text GET /metrics answers: this application's metrics and the process's. */
  exposition(): Promise<string> {
    return Registry.merge([processMetrics(), this]).metrics();
  }
}

let processRegistry: Registry | null = null;

/** Process metrics, collected once per process: their collectors cannot be stopped and would pile up per app. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}
