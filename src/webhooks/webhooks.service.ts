import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Caller } from '../auth/caller';
import { CHANGES_CHANNEL, EVENT_TYPES, WEBHOOK_DELIVERIES_QUEUED } from '../changes/change';
import { conflict, invalidFields, notFound } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import { CursorCodec } from '../common/pagination/cursor';
import type { PageQueryDto } from '../common/pagination/page.dto';
import { toPage } from '../common/pagination/page';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PrismaService, PrismaTransaction } from '../database/prisma.service';
import type { Webhook, WebhookDelivery } from '../generated/prisma/client';
import type {
  CreatedWebhookDto,
  CreateWebhookDto,
  UpdateWebhookDto,
  WebhookDeliveryDto,
  WebhookDeliveryPageDto,
  WebhookDeliveryResponseDto,
  WebhookDto,
  WebhookListDto,
  WebhookResponseDto,
} from './webhook.dto';
import { checkWebhookUrl, WebhookUrlRefused } from './webhook-url-guard';
import { WEBHOOK_DISABLED_ERROR } from './webhook-worker.service';

/** Each webhook adds a delivery to every event it subscribes to: a project has at most this many. */
export const MAX_WEBHOOKS_PER_PROJECT = 20;
/** A deleted webhook's row (and delivery log) is removed this long after the DELETE; see `delete`. */
const PURGE_AFTER_MS = 60_000;

/** A project's webhook subscriptions, their delivery log, and redelivery. WebhookWorker sends. */
@Injectable()
export class WebhooksService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WebhooksService.name);
  private readonly purges = new Set<NodeJS.Timeout>();

  constructor(
    private readonly prisma: PrismaService,
    private readonly cursors: CursorCodec,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Deleted webhooks whose purge a stopped instance never ran. */
  async onApplicationBootstrap(): Promise<void> {
    await this.purgeDeleted();
  }

  onModuleDestroy(): void {
    for (const timer of this.purges) clearTimeout(timer);
  }

  async list(caller: Caller): Promise<WebhookListDto> {
    const rows = await this.prisma.webhook.findMany({
      where: { projectId: caller.projectId, deletedAt: null },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    return { webhooks: rows.map(webhookView) };
  }

  async get(caller: Caller, webhookId: string): Promise<WebhookResponseDto> {
    return { webhook: webhookView(await findWebhook(this.prisma, caller.projectId, webhookId)) };
  }

  /** The secret is made here and answered this once; it is kept as is, since signing needs it. */
  async create(caller: Caller, dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    await this.assertUrlAllowed(dto.url);
    const { projectId } = caller;
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const webhook = await this.prisma.write(async (tx) => {
      // Counted under a lock of the project's webhooks, so two creates at once cannot both pass the limit.
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${`webhooks:${projectId}`}))::text`;
      if ((await tx.webhook.count({ where: { projectId, deletedAt: null } })) >= MAX_WEBHOOKS_PER_PROJECT) {
        throw conflict('conflict', `A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks; delete one first`);
      }
      const now = new Date();
      return tx.webhook.create({
        data: { projectId, url: dto.url, events: eventSet(dto.events), description: dto.description ?? null, secret, createdAt: now, updatedAt: now },
      });
    });
    return { webhook: webhookView(webhook), secret };
  }

  /**
   * Disabling closes the webhook's pending deliveries as failed (they can be redelivered once it
   * is enabled again); enabling starts its 5-day failure clock afresh. A new url or new events
   * apply to every attempt from now on, pending ones included.
   */
  async update(caller: Caller, webhookId: string, dto: UpdateWebhookDto): Promise<WebhookResponseDto> {
    // A 400 comes before a 404 (decisions.md section 1).
    if (dto.url !== undefined) await this.assertUrlAllowed(dto.url);
    const webhook = await this.prisma.write(async (tx) => {
      const current = await findWebhook(tx, caller.projectId, webhookId);
      const enabling = dto.enabled === true && !current.enabled;
      // Deliveries before their webhook, in the order the worker's result statement locks them.
      if (dto.enabled === false) {
        await tx.webhookDelivery.updateMany({
          where: { webhookId: current.id, status: 'pending' },
          data: { status: 'failed', nextAttemptAt: null, error: WEBHOOK_DISABLED_ERROR },
        });
      }
      return tx.webhook.update({
        where: { id: current.id },
        data: {
          url: dto.url,
          events: dto.events && eventSet(dto.events),
          description: dto.description,
          enabled: dto.enabled,
          ...(enabling && { failingSince: null }),
          updatedAt: new Date(),
        },
      });
    });
    return { webhook: webhookView(webhook) };
  }

  /**
   * Gone at once for clients (404, and no new deliveries: it is disabled) and removed with its
   * delivery log a minute later. Removing the row at once could fail a change of the project
   * committing at that moment: its ChangeLog statement may still see the webhook, and its new
   * delivery's foreign key would then name a row that no longer exists.
   */
  async delete(caller: Caller, webhookId: string): Promise<void> {
    await this.prisma.write(async (tx) => {
      const webhook = await findWebhook(tx, caller.projectId, webhookId);
      // Deliveries before their webhook, in the order the worker's result statement locks them.
      await tx.webhookDelivery.updateMany({
        where: { webhookId: webhook.id, status: 'pending' },
        data: { status: 'failed', nextAttemptAt: null, error: WEBHOOK_DISABLED_ERROR },
      });
      await tx.webhook.update({ where: { id: webhook.id }, data: { enabled: false, deletedAt: new Date() } });
    });
    const timer = setTimeout(() => {
      this.purges.delete(timer);
      this.purgeDeleted().catch((error: Error) => this.logger.warn(`Removing deleted webhooks failed: ${error.message}`));
    }, PURGE_AFTER_MS + 1000);
    timer.unref();
    this.purges.add(timer);
  }

  /** Removes the webhooks deleted more than `afterMs` ago, with their delivery logs. */
  async purgeDeleted(afterMs = PURGE_AFTER_MS): Promise<number> {
    const { count } = await this.prisma.webhook.deleteMany({ where: { deletedAt: { lt: new Date(Date.now() - afterMs) } } });
    return count;
  }

  /** A webhook's deliveries, newest first, paginated like the other lists. */
  async deliveries(caller: Caller, webhookId: string, query: PageQueryDto): Promise<WebhookDeliveryPageDto> {
    const limit = query.limit ?? 50;
    const after = this.cursors.positionAfter('webhook_deliveries', query.cursor);
    const webhook = await findWebhook(this.prisma, caller.projectId, webhookId);
    const rows = await this.prisma.webhookDelivery.findMany({
      where: {
        webhookId: webhook.id,
        // Keyset, with the redundant `lte` bound that lets the index serve the OR (as in history).
        ...(after && { createdAt: { lte: after.at }, OR: [{ createdAt: { lt: after.at } }, { createdAt: after.at, id: { lt: after.id } }] }),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      include: { event: { select: { type: true } } },
    });
    const page = toPage(rows, limit, this.cursors, 'webhook_deliveries', (row) => ({ at: row.createdAt, id: row.id }));
    return { deliveries: page.items.map(deliveryView), nextCursor: page.nextCursor };
  }

  /**
   * Queues one more attempt now, whatever the delivery's state. A pending delivery keeps its
   * retry schedule; a finished one (succeeded or failed) gets this one attempt, without retries.
   * The webhook must be enabled (409 otherwise).
   */
  async redeliver(caller: Caller, webhookId: string, deliveryId: string): Promise<WebhookDeliveryResponseDto> {
    const delivery = await this.prisma.write(async (tx) => {
      const webhook = await findWebhook(tx, caller.projectId, webhookId);
      const exists = isUuid(deliveryId) && (await tx.webhookDelivery.count({ where: { id: deliveryId, webhookId: webhook.id } })) > 0;
      if (!exists) throw notFound('Delivery');
      if (!webhook.enabled) throw conflict('conflict', 'The webhook is disabled: enable it (PATCH enabled: true) before redelivering');
      // The NOTIFY reaches the workers of every instance at commit.
      await tx.$queryRaw`
        WITH requeued AS (
          UPDATE webhook_deliveries d
             SET status = 'pending', next_attempt_at = ${new Date().toISOString()}::timestamptz,
                 final_attempt = d.final_attempt OR d.status <> 'pending'
           WHERE d.id = ${deliveryId}::uuid
          RETURNING d.id
        )
        SELECT pg_notify(${CHANGES_CHANNEL}, ${WEBHOOK_DELIVERIES_QUEUED})::text AS notified FROM requeued`;
      return tx.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId }, include: { event: { select: { type: true } } } });
    });
    return { delivery: deliveryView(delivery) };
  }

  private async assertUrlAllowed(url: string): Promise<void> {
    try {
      await checkWebhookUrl(url, this.config.webhookAllowPrivateUrls);
    } catch (error) {
      if (error instanceof WebhookUrlRefused) throw invalidFields('invalid_webhook_url', [{ field: 'url', message: error.message }]);
      throw error;
    }
  }
}

/** A webhook of the project, or 404 (also for another project's and for anything not an id). */
async function findWebhook(db: PrismaService | PrismaTransaction, projectId: string, webhookId: string): Promise<Webhook> {
  const webhook = isUuid(webhookId) ? await db.webhook.findFirst({ where: { id: webhookId, projectId, deletedAt: null } }) : null;
  if (!webhook) throw notFound('Webhook');
  return webhook;
}

/** `events` as stored and shown: `["*"]`, or the types in the order of EVENT_TYPES, each once. */
function eventSet(events: string[]): string[] {
  return events.includes('*') ? ['*'] : EVENT_TYPES.filter((type) => events.includes(type));
}

function webhookView(row: Webhook): WebhookDto {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    createdAt: row.createdAt.toISOString(),
  };
}

function deliveryView(row: WebhookDelivery & { event: { type: string } }): WebhookDeliveryDto {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.event.type,
    status: row.status,
    attempts: row.attempts,
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: row.status === 'pending' ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    responseStatus: row.responseStatus,
    error: row.error,
  };
}
