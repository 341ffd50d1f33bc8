import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Caller } from '../auth/caller';
import { CHANGES_CHANNEL, EVENT_TYPES, WEBHOOK_DELIVERIES_QUEUED } from '../changes/change';
import { conflict, invalidFields, notFound } from '../common/errors/problem';
import { CursorCodec } from '../common/pagination/cursor';
import type { PageQueryDto } from '../common/pagination/page.dto';
import { toPage } from '../common/pagination/page';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PrismaService } from '../database/prisma.service';
import type { SqlTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
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
import { DELIVERY_JSON, WEBHOOK_JSON } from './webhook-view.sql';
import { closePendingDeliveries } from './pending-deliveries';

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
    const [row] = await this.prisma.$queryRaw<{ webhooks: WebhookDto[] }[]>`
      SELECT COALESCE(json_agg(${WEBHOOK_JSON} ORDER BY w.created_at DESC, w.id DESC), '[]'::json) AS webhooks
        FROM webhooks w WHERE w.project_id = ${caller.projectId}::uuid AND w.deleted_at IS NULL`;
    return { webhooks: row.webhooks };
  }

  async get(caller: Caller, webhookId: string): Promise<WebhookResponseDto> {
    return { webhook: (await findWebhook(this.prisma, caller.projectId, webhookId)).view };
  }

  /** The secret is made here and answered this once; it is kept as is, since signing needs it. */
  async create(caller: Caller, dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    await this.assertUrlAllowed(dto.url);
    const { projectId } = caller;
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const webhook = await this.prisma.write(async (tx) => {
      // Counted under a lock of the project's webhooks, after it, so two creates at once cannot both pass the limit.
      await tx.lock(`webhooks:${projectId}`);
      const [{ count }] = await tx.$queryRaw<{ count: number }[]>`
        SELECT count(*)::int AS count FROM webhooks WHERE project_id = ${projectId}::uuid AND deleted_at IS NULL`;
      if (count >= MAX_WEBHOOKS_PER_PROJECT) {
        throw conflict('conflict', `A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks; delete one first`);
      }
      const now = new Date().toISOString();
      const [row] = await tx.$queryRaw<{ webhook: WebhookDto }[]>`
        INSERT INTO webhooks AS w (project_id, url, events, description, secret, created_at, updated_at)
        VALUES (${projectId}::uuid, ${dto.url}, ${eventSet(dto.events)}::text[], ${dto.description ?? null}, ${secret}, ${now}::timestamptz, ${now}::timestamptz)
        RETURNING ${WEBHOOK_JSON} AS webhook`;
      return row.webhook;
    });
    return { webhook, secret };
  }

  /** Disabling fails the pending deliveries (redeliverable later); enabling restarts the failure clock. */
  async update(caller: Caller, webhookId: string, dto: UpdateWebhookDto): Promise<WebhookResponseDto> {
    // A 400 comes before a 404 (decisions.md section 1).
    if (dto.url !== undefined) await this.assertUrlAllowed(dto.url);
    const webhook = await this.prisma.write(async (tx) => {
      const current = await findWebhook(tx, caller.projectId, webhookId);
      // Deliveries before their webhook, in the order the worker's result statement locks them.
      if (dto.enabled === false) await closePendingDeliveries(tx, [current.view.id]);
      const [row] = await tx.$queryRaw<{ webhook: WebhookDto }[]>`
        UPDATE webhooks w
           SET url = COALESCE(${dto.url ?? null}, w.url),
               events = COALESCE(${dto.events ? eventSet(dto.events) : null}::text[], w.events),
               description = CASE WHEN ${dto.description !== undefined} THEN ${dto.description ?? null} ELSE w.description END,
               enabled = COALESCE(${dto.enabled ?? null}::boolean, w.enabled),
               -- Enabling starts the failure clock afresh; decided on the row as it is now (the worker may have just disabled it).
               failing_since = CASE WHEN ${dto.enabled === true} AND NOT w.enabled THEN NULL ELSE w.failing_since END,
               updated_at = ${new Date().toISOString()}::timestamptz
         WHERE w.id = ${current.view.id}::uuid
        RETURNING ${WEBHOOK_JSON} AS webhook`;
      return row.webhook;
    });
    return { webhook };
  }

  /**
   * Gone at once for clients (disabled, 404), removed a minute later: a change committing now may
   * still see the webhook, and its new delivery's foreign key would name a missing row.
   */
  async delete(caller: Caller, webhookId: string): Promise<void> {
    await this.prisma.write(async (tx) => {
      const webhook = await findWebhook(tx, caller.projectId, webhookId);
      // Deliveries before their webhook, in the order the worker's result statement locks them.
      await closePendingDeliveries(tx, [webhook.view.id]);
      await tx.$executeRaw`UPDATE webhooks SET enabled = false, deleted_at = ${new Date().toISOString()}::timestamptz WHERE id = ${webhook.view.id}::uuid`;
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
    return this.prisma.$executeRaw`DELETE FROM webhooks WHERE deleted_at < ${new Date(Date.now() - afterMs).toISOString()}::timestamptz`;
  }

  /** A webhook's deliveries, newest first, paginated like the other lists. */
  async deliveries(caller: Caller, webhookId: string, query: PageQueryDto): Promise<WebhookDeliveryPageDto> {
    const limit = query.limit ?? 50;
    const list = { query, path: { webhookId } };
    const after = this.cursors.positionAfter('webhook_deliveries', list);
    const webhook = await findWebhook(this.prisma, caller.projectId, webhookId);
    // Keyset: the row comparison is served by the (webhook_id, created_at DESC, id DESC) index.
    const keyset = after ? Prisma.sql`AND (d.created_at, d.id) < (${after.at.toISOString()}::timestamptz, ${after.id}::uuid)` : Prisma.empty;
    const rows = await this.prisma.$queryRaw<{ delivery: WebhookDeliveryDto; at: Date }[]>`
      SELECT ${DELIVERY_JSON} AS delivery, d.created_at AS at
        FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.webhook_id = ${webhook.view.id}::uuid ${keyset}
       ORDER BY d.created_at DESC, d.id DESC
       LIMIT ${limit + 1}`;
    const page = toPage(rows, limit, this.cursors, 'webhook_deliveries', list, (row) => ({ at: row.at, id: row.delivery.id }));
    return { deliveries: page.items.map((row) => row.delivery), nextCursor: page.nextCursor };
  }

  /** One more attempt now: a pending delivery keeps its schedule, a finished one gets this attempt alone. */
  async redeliver(caller: Caller, webhookId: string, deliveryId: string): Promise<WebhookDeliveryResponseDto> {
    const delivery = await this.prisma.write(async (tx) => {
      const webhook = await findWebhook(tx, caller.projectId, webhookId);
      const [found] = await tx.$queryRaw<{ exists: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = ${deliveryId}::uuid AND webhook_id = ${webhook.view.id}::uuid) AS exists`;
      if (!found.exists) throw notFound('Delivery');
      if (!webhook.view.enabled) throw conflict('conflict', 'The webhook is disabled: enable it (PATCH enabled: true) before redelivering');
      // The NOTIFY reaches the workers of every instance at commit.
      const [row] = await tx.$queryRaw<{ delivery: WebhookDeliveryDto }[]>`
        WITH requeued AS (
          UPDATE webhook_deliveries d
             SET status = 'pending', next_attempt_at = ${new Date().toISOString()}::timestamptz,
                 final_attempt = d.final_attempt OR d.status <> 'pending'
           WHERE d.id = ${deliveryId}::uuid
          RETURNING d.*
        ),
        notified AS (SELECT pg_notify(${CHANGES_CHANNEL}, ${WEBHOOK_DELIVERIES_QUEUED}) FROM requeued)
        SELECT ${DELIVERY_JSON} AS delivery FROM requeued d JOIN events e ON e.id = d.event_id, notified`;
      return row.delivery;
    });
    return { delivery };
  }

  private async assertUrlAllowed(url: string): Promise<void> {
    try {
      await checkWebhookUrl(url, this.config.webhookAllowPrivateUrls);
    } catch (error) {
      if (error instanceof WebhookUrlRefused) {
        // What lifts it, for a developer pointing a webhook at a receiver on their own machine.
        const lift = error.allowedWhenPrivate
          ? ' (a server started with WEBHOOK_ALLOW_PRIVATE_URLS=true allows http:// and private, loopback and link-local addresses: development and tests only)'
          : '';
        throw invalidFields('invalid_webhook_url', [{ field: 'url', message: `${error.message}${lift}` }]);
      }
      throw error;
    }
  }
}

/** A webhook of the project, or 404 (also for another project's). */
async function findWebhook(db: PrismaService | SqlTransaction, projectId: string, webhookId: string): Promise<{ view: WebhookDto }> {
  const rows = await db.$queryRaw<{ view: WebhookDto }[]>`
    SELECT ${WEBHOOK_JSON} AS view FROM webhooks w
     WHERE w.id = ${webhookId}::uuid AND w.project_id = ${projectId}::uuid AND w.deleted_at IS NULL`;
  if (rows.length === 0) throw notFound('Webhook');
  return rows[0];
}

/** `events` as stored and shown: `["*"]`, or the types in the order of EVENT_TYPES, each once. */
function eventSet(events: string[]): string[] {
  return events.includes('*') ? ['*'] : EVENT_TYPES.filter((type) => events.includes(type));
}
