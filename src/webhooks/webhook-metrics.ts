import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsRegistry } from '../metrics/metrics-registry';
import { WebhookWorker } from './webhook-worker.service';

/** The webhook worker's outcomes and backlog, read at each scrape (decisions.md section 15). */
@Injectable()
export class WebhookMetrics {
  constructor(registry: MetricsRegistry, worker: WebhookWorker) {
    new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts made by this instance, by outcome',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        const stats = worker.stats();
        this.reset();
        this.inc({ outcome: 'succeeded' }, stats.attemptsSucceeded);
        this.inc({ outcome: 'failed' }, stats.attemptsFailed);
      },
    });
    new Counter({
      name: 'webhook_deliveries_failed_total',
      help: 'Webhook deliveries given up by this instance after their last attempt',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(worker.stats().deliveriesFailed);
      },
    });
    new Gauge({
      name: 'webhook_attempts_in_flight',
      help: 'Webhook delivery attempts this instance is sending now',
      registers: [registry],
      collect() {
        this.set(worker.stats().inFlight);
      },
    });
    new Gauge({
      name: 'webhook_oldest_pending_delivery_age_seconds',
      help: 'Seconds since the oldest pending webhook delivery was queued, across all instances (0 when none)',
      registers: [registry],
      async collect() {
        this.set(await worker.oldestPendingAgeSeconds());
      },
    });
  }
}
