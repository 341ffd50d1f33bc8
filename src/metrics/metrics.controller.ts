import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { Public } from '../auth/auth.decorators';
import { MetricsRegistry } from './metrics-registry';

@ApiTags('health')
@Public()
@Controller()
export class MetricsController {
  constructor(private readonly registry: MetricsRegistry) {}

  /** Prometheus metrics (text exposition format), for a scraper: no key. */
  @Get('metrics')
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } })
  scrapeMetrics(): Promise<string> {
    return this.registry.exposition();
  }
}
