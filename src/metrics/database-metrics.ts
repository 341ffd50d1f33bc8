import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { PrismaService } from '../database/prisma.service';
import { MetricsRegistry } from './metrics-registry';

/**
 * Writes run again (PrismaService.write), and the PostgreSQL connection pool, read at each
 * scrape. PGlite has no pool (one connection inside the process, one statement at a time):
 * there the pool's gauges are not registered.
 */
@Injectable()
export class DatabaseMetrics {
  constructor(registry: MetricsRegistry, prisma: PrismaService) {
    const retries = new Counter({
      name: 'db_write_retries_total',
      help: 'Write transactions run again after a deadlock, a serialization failure or locks that moved (PrismaService.write), by reason',
      labelNames: ['reason'],
      registers: [registry],
    });
    prisma.onWriteRetry((reason) => retries.inc({ reason }));
    const engine = prisma.engine;
    if (!engine.poolStats()) return;
    const stats = () => engine.poolStats()!;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Open connections of the database pool, by state',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const { total, idle } = stats();
        this.set({ state: 'busy' }, total - idle);
        this.set({ state: 'idle' }, idle);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries and transactions waiting for a database connection',
      registers: [registry],
      collect() {
        this.set(stats().waiting);
      },
    });
    new Gauge({ name: 'db_pool_max_connections', help: 'Size of the database pool', registers: [registry] }).set(stats().max);
  }
}
