import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { AppConfig } from '../src/config/app-config';
import { WebhookWorker } from '../src/webhooks/webhook-worker.service';
import { createProject, createTask, withKey } from './support/fixtures';
import { createTestDatabase, engine, startTestApp, TestDatabase } from './support/test-app';
import { sleep, startReceiver, waitUntil, WebhookReceiver } from './support/webhook-receiver';

/**
 * One database used by several app instances in turn or at once: a PostgreSQL database, or a
 * PGlite data directory on disk. `keep` is for every instance but the last one closed, whose
 * close drops it.
 */
async function sharedDatabase(): Promise<{ config: Partial<AppConfig>; keep: TestDatabase; last: TestDatabase; cleanUp(): void }> {
  const database = await createTestDatabase();
  const dataDir = engine === 'pglite' ? mkdtempSync(join(tmpdir(), 'webhook-outbox-')) : undefined;
  return {
    config: dataDir ? { dataDir } : {},
    keep: { ...database, drop: async () => undefined },
    last: database,
    cleanUp: () => dataDir && rmSync(dataDir, { recursive: true, force: true }),
  };
}

const OVERRIDES: Partial<AppConfig> = { webhookAllowPrivateUrls: true, webhookRetrySchedule: [300] };
/** Each test starts two apps, on PGlite from a data directory on disk: slow on a busy machine. */
const TWO_APPS_MS = 180_000;

describe('the webhook outbox', () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.close());

  it(
    'delivers after a restart an event committed while no worker could send it (the outbox survives)',
    async () => {
      const shared = await sharedDatabase();
      try {
        const first = await startTestApp({ ...OVERRIDES, ...shared.config }, shared.keep);
        const project = await createProject(first, 'Outbox restart');
        const { webhook, secret } = (await project.api.post('/api/v1/webhooks', { url: receiver.url, events: ['*'] }).expect(201)).body;
        // The process "dies" between the commit and the delivery: its worker never sends.
        await first.app.get(WebhookWorker).stop();
        const task = await createTask(project, { title: 'Committed before the crash' });
        expect(await first.prisma.webhookDelivery.findMany({ where: { webhookId: webhook.id } })).toEqual([
          expect.objectContaining({ status: 'pending', attempts: 0 }),
        ]);
        await first.close();
        expect(receiver.received).toHaveLength(0);

        const second = await startTestApp({ ...OVERRIDES, ...shared.config }, shared.last);
        try {
          const [request] = await receiver.waitFor(1);
          const event = new StandardWebhook(secret).verify(request.body, request.headers) as { type: string; data: { task: { id: string } } };
          expect(event).toMatchObject({ type: 'task.created', data: { task: { id: task.id } } });
          await waitUntil(
            async () => (await second.prisma.webhookDelivery.findFirstOrThrow({ where: { webhookId: webhook.id } })).status === 'succeeded',
            5000,
            'the delivery to succeed',
          );
          expect(await second.prisma.webhookDelivery.findFirstOrThrow({ where: { webhookId: webhook.id } })).toMatchObject({ attempts: 1 });
          await sleep(200);
          expect(receiver.received).toHaveLength(1);
        } finally {
          await second.close();
        }
      } finally {
        shared.cleanUp();
      }
    },
    TWO_APPS_MS,
  );

  it(
    'releases an attempt still in flight at shutdown, and the next instance sends it at once',
    async () => {
      receiver.answer = (n) => (n === 1 ? 'hang' : 200);
      const shared = await sharedDatabase();
      // A long timeout and lease: only the release at shutdown can make the delivery due again soon.
      const config = { ...OVERRIDES, ...shared.config, webhookTimeoutMs: 60_000 };
      try {
        const first = await startTestApp(config, shared.keep);
        const project = await createProject(first, 'Outbox shutdown');
        const { webhook } = (await project.api.post('/api/v1/webhooks', { url: receiver.url, events: ['task.created'] }).expect(201)).body;
        await createTask(project);
        await receiver.waitFor(1);
        const closedAt = Date.now();
        await first.close();
        expect(Date.now() - closedAt).toBeLessThan(10_000);

        const second = await startTestApp(config, shared.last);
        try {
          const requests = await receiver.waitFor(2, 10_000);
          expect(requests[1].headers['webhook-id']).toBe(requests[0].headers['webhook-id']);
          await waitUntil(
            async () => (await second.prisma.webhookDelivery.findFirstOrThrow({ where: { webhookId: webhook.id } })).status === 'succeeded',
            5000,
            'the delivery to succeed',
          );
          // The released attempt got no answer: it is not counted.
          expect(await second.prisma.webhookDelivery.findFirstOrThrow({ where: { webhookId: webhook.id } })).toMatchObject({
            attempts: 1,
            responseStatus: 200,
          });
        } finally {
          await second.close();
        }
      } finally {
        shared.cleanUp();
      }
    },
    TWO_APPS_MS,
  );

  // Several instances share one queue only on a server database.
  (engine === 'postgresql' ? it : it.skip)(
    'two instances on one PostgreSQL deliver each event once (PostgreSQL)',
    async () => {
      const shared = await sharedDatabase();
      const first = await startTestApp(OVERRIDES, shared.keep);
      const second = await startTestApp(OVERRIDES, shared.last);
      try {
        const project = await createProject(first, 'Outbox two instances');
        const onSecond = withKey(second, project.key);
        const { webhook } = (await project.api.post('/api/v1/webhooks', { url: receiver.url, events: ['*'] }).expect(201)).body;
        const count = 120;
        for (let batch = 0; batch < count / 20; batch++) {
          await Promise.all(
            Array.from({ length: 20 }, (_, i) => (i % 2 ? project.api : onSecond).post('/api/v1/tasks', { title: `Task ${batch}-${i}` }).expect(201)),
          );
        }
        await receiver.waitFor(count, 20_000);
        await sleep(500);
        expect(receiver.received).toHaveLength(count);
        expect(new Set(receiver.received.map((request) => request.headers['webhook-id'])).size).toBe(count);
        const deliveries = await first.prisma.webhookDelivery.findMany({ where: { webhookId: webhook.id } });
        expect(deliveries).toHaveLength(count);
        expect(deliveries.every((delivery) => delivery.status === 'succeeded' && delivery.attempts === 1)).toBe(true);
        const sent = [first, second].map((instance) => instance.app.get(WebhookWorker).stats().attemptsSucceeded);
        expect(sent[0] + sent[1]).toBe(count);
      } finally {
        await first.close();
        await second.close();
      }
    },
    TWO_APPS_MS,
  );
});
