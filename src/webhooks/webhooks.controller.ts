import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBadRequestResponse, ApiConflictResponse, ApiNotFoundResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { ShowsSecret } from '../common/http/browser-edges';
import { CreatedAt } from '../common/http/location';
import { PageQueryDto } from '../common/pagination/page.dto';
import { NonEmptyBodyPipe } from '../common/validation/non-empty-body.pipe';
import {
  CreatedWebhookDto,
  CreateWebhookDto,
  UpdateWebhookDto,
  WebhookDeliveryPageDto,
  WebhookDeliveryResponseDto,
  WebhookListDto,
  WebhookResponseDto,
} from './webhook.dto';
import { WebhooksService } from './webhooks.service';

const INVALID_URL = 'invalid_webhook_url: not https://, or the host is or resolves to a loopback, private, link-local or other non-public address';

@ApiTags('webhooks')
@ApiKeyAuthenticated()
@Controller('api/v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  /** The project's webhooks, newest first. */
  @Get()
  listWebhooks(@CurrentCaller() caller: Caller): Promise<WebhookListDto> {
    return this.webhooks.list(caller);
  }

  /**
   * Subscribes a URL to events: each one is POSTed to it, signed as Standard Webhooks describes.
   * Answers the signing secret this once.
   */
  @Post()
  @RequirePermission('webhooks:manage')
  @ShowsSecret()
  @CreatedAt(CreatedWebhookDto, '/api/v1/webhooks/{webhookId}', (answer) => `/api/v1/webhooks/${answer.webhook.id}`)
  @ApiBadRequestResponse({ description: `Invalid or unknown field, an unknown event type, or ${INVALID_URL}`, type: ProblemDto })
  @ApiConflictResponse({ description: 'The project already has 20 webhooks', type: ProblemDto })
  createWebhook(@CurrentCaller() caller: Caller, @Body() dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    return this.webhooks.create(caller, dto);
  }

  /** One webhook of the project (never its secret). */
  @Get(':webhookId')
  @ApiNotFoundResponse({ description: 'No such webhook in this project', type: ProblemDto })
  getWebhook(@CurrentCaller() caller: Caller, @Param('webhookId') webhookId: string): Promise<WebhookResponseDto> {
    return this.webhooks.get(caller, webhookId);
  }

  /** Changes url, events, description or enabled. Disabling closes its pending deliveries as failed. */
  @Patch(':webhookId')
  @RequirePermission('webhooks:manage')
  @ApiBadRequestResponse({ description: `Empty body, invalid or unknown field, an unknown event type, or ${INVALID_URL}`, type: ProblemDto })
  @ApiNotFoundResponse({ description: 'No such webhook in this project', type: ProblemDto })
  updateWebhook(
    @CurrentCaller() caller: Caller,
    @Param('webhookId') webhookId: string,
    @Body(NonEmptyBodyPipe) dto: UpdateWebhookDto,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.update(caller, webhookId, dto);
  }

  /** Deletes the webhook and its delivery log; nothing more is sent to it. */
  @Delete(':webhookId')
  @HttpCode(204)
  @RequirePermission('webhooks:manage')
  @ApiNotFoundResponse({ description: 'No such webhook in this project', type: ProblemDto })
  deleteWebhook(@CurrentCaller() caller: Caller, @Param('webhookId') webhookId: string): Promise<void> {
    return this.webhooks.delete(caller, webhookId);
  }

  /** The webhook's deliveries, one per event, newest first: status, attempts and the last answer. */
  @Get(':webhookId/deliveries')
  @ApiBadRequestResponse({ description: 'Invalid limit or cursor, or an unknown query parameter', type: ProblemDto })
  @ApiNotFoundResponse({ description: 'No such webhook in this project', type: ProblemDto })
  listWebhookDeliveries(
    @CurrentCaller() caller: Caller,
    @Param('webhookId') webhookId: string,
    @Query() query: PageQueryDto,
  ): Promise<WebhookDeliveryPageDto> {
    return this.webhooks.deliveries(caller, webhookId, query);
  }

  /**
   * Queues one more attempt of the delivery now, whatever its state; answers the delivery as
   * queued. A pending delivery keeps its retry schedule; a finished one gets this attempt only.
   */
  @Post(':webhookId/deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @RequirePermission('webhooks:manage')
  @ApiAcceptedResponse({ type: WebhookDeliveryResponseDto })
  @ApiNotFoundResponse({ description: 'No such webhook in this project, or no such delivery of it', type: ProblemDto })
  @ApiConflictResponse({ description: 'The webhook is disabled: enable it first', type: ProblemDto })
  redeliverWebhookDelivery(
    @CurrentCaller() caller: Caller,
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<WebhookDeliveryResponseDto> {
    return this.webhooks.redeliver(caller, webhookId, deliveryId);
  }
}
