import { Module } from '@nestjs/common';
import { WebhookMetrics } from './webhook-metrics';
import { WebhookWorker } from './webhook-worker.service';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Webhook subscriptions and their delivery log (/api/v1/webhooks), and the worker that sends the deliveries. */
@Module({ controllers: [WebhooksController], providers: [WebhooksService, WebhookWorker, WebhookMetrics], exports: [WebhookWorker] })
export class WebhooksModule {}
