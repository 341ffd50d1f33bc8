import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram } from 'prom-client';
import { HttpDrain } from '../lifecycle/http-drain';
import { durationMs, routeTemplate } from '../logging/logger';
import { MetricsRegistry } from './metrics-registry';

type RequestLabels = 'method' | 'route' | 'status';

/** Request counts and durations by method, route template (never the raw path) and status. */
@Injectable()
export class HttpMetrics {
  private readonly requests: Counter<RequestLabels>;
  private readonly duration: Histogram<RequestLabels>;
  /** Answers that stay open until their client leaves: counted, not timed. */
  private readonly untimedAnswers = new WeakSet<Response>();

  constructor(registry: MetricsRegistry, httpDrain: HttpDrain) {
    const labelNames = ['method', 'route', 'status'] as const;
    this.requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames, registers: [registry] });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer (event streams excluded)',
      labelNames,
      // Up to 30 s: a long poll may be held that long.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    new Gauge({
      name: 'http_requests_in_flight',
      help: 'Requests received and not yet answered',
      registers: [registry],
      collect() {
        this.set(httpDrain.inFlightCount);
      },
    });
  }

  /**
   * An answer that lasts as long as its client wants (an event stream): its duration says
   * nothing of the service's speed, and minutes of it would swamp the histogram's sum.
   */
  untimed(res: Response): void {
    this.untimedAnswers.add(res);
  }

  /** Middleware: counts each answer once it is sent (the route is known by then). */
  middleware(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      res.once('finish', () => {
        const labels = { method: req.method, route: routeTemplate(req), status: String(res.statusCode) };
        this.requests.inc(labels);
        if (!this.untimedAnswers.has(res)) this.duration.observe(labels, durationMs(req) / 1000);
      });
      next();
    };
  }
}
