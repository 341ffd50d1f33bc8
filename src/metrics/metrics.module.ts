import { Global, Module } from '@nestjs/common';
import { DatabaseMetrics } from './database-metrics';
import { HttpMetrics } from './http-metrics';
import { MetricsController } from './metrics.controller';
import { MetricsRegistry } from './metrics-registry';

/** GET /metrics, and the registry every module registers its own metrics on (MetricsRegistry, injectable everywhere). */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsRegistry, HttpMetrics, DatabaseMetrics],
  exports: [MetricsRegistry, HttpMetrics],
})
export class MetricsModule {}
