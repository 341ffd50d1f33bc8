import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { OpenAPIObject } from '@nestjs/swagger';
import { describeWebhookDeliveries } from '../src/webhooks/webhook-openapi';
import { WEBHOOK_DISABLED_ERROR } from '../src/webhooks/pending-deliveries';
import { WebhooksService } from '../src/webhooks/webhooks.service';
import { asAdmin, createProject, createTask, ISO_TIMESTAMP, NO_SUCH_ID, TestProject } from './support/fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { sleep, startReceiver, waitUntil, WebhookReceiver } from './support/webhook-receiver';
import { withAnswersResolved } from './support/openapi-contract';

/** Short retries and timeout, so that a whole retry schedule runs within a test. */
const RETRY_SCHEDULE = [300, 600];
const TIMEOUT_MS = 1000;

describe('webhooks', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await startTestApp({ webhookAllowPrivateUrls: true, webhookRetrySchedule: RETRY_SCHEDULE, webhookTimeoutMs: TIMEOUT_MS });
  });
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.close());
  afterAll(() => t.close());

  async function subscribe(project: TestProject, body: Record<string, unknown> = {}) {
    const res = await project.api.post('/api/v1/webhooks', { url: receiver.url, events: ['*'], ...body }).expect(201);
    return res.body as { webhook: { id: string; url: string; events: string[]; enabled: boolean }; secret: string };
  }

  async function deliveriesOf(project: TestProject, webhookId: string) {
    return (await project.api.get(`/api/v1/webhooks/${webhookId}/deliveries`).expect(200)).body.deliveries as Record<string, unknown>[];
  }

  describe('subscriptions', () => {
    it('creates a webhook and answers its signing secret once; reads never show it', async () => {
      const project = await createProject(t, 'Webhooks create');
      const res = await project.api
        .post('/api/v1/webhooks', { url: receiver.url, events: ['task.created', 'sprint.closed'], description: 'Mirror' })
        .expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['secret', 'webhook']);
      const { webhook, secret } = res.body;
      expect(Object.keys(webhook).sort()).toEqual(['createdAt', 'description', 'enabled', 'events', 'id', 'url']);
      expect(webhook).toMatchObject({ url: receiver.url, events: ['task.created', 'sprint.closed'], description: 'Mirror', enabled: true });
      expect(webhook.createdAt).toMatch(ISO_TIMESTAMP);
      expect(res.headers.location).toBe(`/api/v1/webhooks/${webhook.id}`);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

      const one = await project.api.get(`/api/v1/webhooks/${webhook.id}`).expect(200);
      expect(one.body).toEqual({ webhook });
      const list = await project.api.get('/api/v1/webhooks').expect(200);
      expect(list.body).toEqual({ webhooks: [webhook] });
      expect(JSON.stringify([one.body, list.body])).not.toContain(secret.slice(6));
      expect((await t.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).secret).toBe(secret);
      const other = await subscribe(project);
      expect(other.secret).not.toBe(secret);
    });

    it('takes events as a set of known types, in the canonical order, or ["*"] alone', async () => {
      const project = await createProject(t, 'Webhooks events');
      const { webhook } = await subscribe(project, { events: ['task.updated', 'task.created', 'task.updated'] });
      expect(webhook.events).toEqual(['task.created', 'task.updated']);
      for (const events of [[], ['task.exploded'], ['*', 'task.created'], 'task.created', [1]]) {
        const res = await project.api.post('/api/v1/webhooks', { url: receiver.url, events }).expect(400);
        expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'events' }] });
      }
      expect(await t.prisma.webhook.count({ where: { projectId: project.id } })).toBe(1);
    });

    it('refuses unknown fields, a missing url and a description over 500 characters', async () => {
      const project = await createProject(t, 'Webhooks strict');
      let res = await project.api.post('/api/v1/webhooks', { url: receiver.url, events: ['*'], secret: 'whsec_mine' }).expect(400);
      expect(res.body).toMatchObject({ code: 'unknown_field', errors: [{ field: 'secret' }] });
      res = await project.api.post('/api/v1/webhooks', { events: ['*'] }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'url' }] });
      res = await project.api.post('/api/v1/webhooks', { url: receiver.url, events: ['*'], description: 'x'.repeat(501) }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'description' }] });
      res = await project.api.post('/api/v1/webhooks', { url: 'not a url', events: ['*'] }).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_webhook_url', errors: [{ field: 'url' }] });
      expect(await t.prisma.webhook.count({ where: { projectId: project.id } })).toBe(0);
    });

    it('PATCH changes url, events, description and enabled; null clears the description; an empty body is 400', async () => {
      const project = await createProject(t, 'Webhooks patch');
      const { webhook } = await subscribe(project, { description: 'Before' });
      const other = await startReceiver();
      try {
        const res = await project.api
          .patch(`/api/v1/webhooks/${webhook.id}`, { url: other.url, events: ['sprint.created'], description: null, enabled: false })
          .expect(200);
        expect(res.body.webhook).toEqual({ ...webhook, url: other.url, events: ['sprint.created'], description: null, enabled: false });
        expect((await project.api.get(`/api/v1/webhooks/${webhook.id}`)).body.webhook).toEqual(res.body.webhook);
      } finally {
        await other.close();
      }
      expect((await project.api.patch(`/api/v1/webhooks/${webhook.id}`, {}).expect(400)).body.code).toBe('empty_body');
      for (const body of [{ url: null }, { events: null }, { enabled: null }, { enabled: 'yes' }]) {
        expect((await project.api.patch(`/api/v1/webhooks/${webhook.id}`, body).expect(400)).body.code).toBe('validation_failed');
      }
      expect((await project.api.patch(`/api/v1/webhooks/${webhook.id}`, { secret: 'x' }).expect(400)).body.code).toBe('unknown_field');
    });

    it('DELETE removes the webhook at once for clients, and its row and delivery log a minute later; a second DELETE is 404', async () => {
      const project = await createProject(t, 'Webhooks delete');
      const { webhook } = await subscribe(project);
      const kept = await subscribe(project);
      await createTask(project);
      await receiver.waitFor(2);
      await project.api.delete(`/api/v1/webhooks/${webhook.id}`).expect(204);
      await project.api.get(`/api/v1/webhooks/${webhook.id}`).expect(404);
      await project.api.get(`/api/v1/webhooks/${webhook.id}/deliveries`).expect(404);
      await project.api.delete(`/api/v1/webhooks/${webhook.id}`).expect(404);
      expect((await project.api.get('/api/v1/webhooks').expect(200)).body.webhooks.map((w: { id: string }) => w.id)).toEqual([kept.webhook.id]);
      await createTask(project);
      await receiver.waitFor(3);
      await sleep(200);
      expect(receiver.received.filter((request) => JSON.parse(request.body).type === 'task.created')).toHaveLength(3);
      expect(await t.prisma.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(1);

      const service = t.app.get(WebhooksService);
      expect(await service.purgeDeleted()).toBe(0);
      expect(await service.purgeDeleted(0)).toBe(1);
      expect(await t.prisma.webhook.findUnique({ where: { id: webhook.id } })).toBeNull();
      expect(await t.prisma.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(0);
      expect(await t.prisma.webhook.findUnique({ where: { id: kept.webhook.id } })).not.toBeNull();
    });

    it('reading needs any key; writing needs webhooks:manage (403 naming it, nothing changes)', async () => {
      const project = await createProject(t, 'Webhooks permissions');
      const { webhook } = await subscribe(project);
      const reader = await project.issueKey(['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage'], 'Reader');
      await reader.api.get('/api/v1/webhooks').expect(200);
      await reader.api.get(`/api/v1/webhooks/${webhook.id}`).expect(200);
      await reader.api.get(`/api/v1/webhooks/${webhook.id}/deliveries`).expect(200);
      const refused = [
        await reader.api.post('/api/v1/webhooks', { url: receiver.url, events: ['*'] }),
        await reader.api.patch(`/api/v1/webhooks/${webhook.id}`, { enabled: false }),
        await reader.api.delete(`/api/v1/webhooks/${webhook.id}`),
        await reader.api.post(`/api/v1/webhooks/${webhook.id}/deliveries/${NO_SUCH_ID}/redeliver`),
      ];
      for (const res of refused) {
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'insufficient_permission', requiredPermission: 'webhooks:manage' });
      }
      expect(await t.prisma.webhook.findMany({ where: { projectId: project.id } })).toEqual([
        expect.objectContaining({ id: webhook.id, enabled: true }),
      ]);
    });

    it("is 404 for another project's webhook and for anything that is not an id", async () => {
      const owner = await createProject(t, 'Webhooks owner');
      const stranger = await createProject(t, 'Webhooks stranger');
      const { webhook } = await subscribe(owner);
      await createTask(owner);
      await receiver.waitFor(1);
      const [delivery] = await deliveriesOf(owner, webhook.id);
      for (const res of [
        await stranger.api.get(`/api/v1/webhooks/${webhook.id}`),
        await stranger.api.patch(`/api/v1/webhooks/${webhook.id}`, { enabled: false }),
        await stranger.api.delete(`/api/v1/webhooks/${webhook.id}`),
        await stranger.api.get(`/api/v1/webhooks/${webhook.id}/deliveries`),
        await stranger.api.post(`/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`),
        await owner.api.get('/api/v1/webhooks/not-an-id'),
        await owner.api.get(`/api/v1/webhooks/${webhook.id.toUpperCase()}`),
        await owner.api.post(`/api/v1/webhooks/${webhook.id}/deliveries/not-an-id/redeliver`),
        await owner.api.post(`/api/v1/webhooks/${webhook.id}/deliveries/${NO_SUCH_ID}/redeliver`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      expect((await stranger.api.get('/api/v1/webhooks').expect(200)).body).toEqual({ webhooks: [] });
      expect(await t.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ enabled: true });
    });

    it('allows at most 20 webhooks per project (409 for the 21st)', async () => {
      const project = await createProject(t, 'Webhooks limit');
      for (let i = 0; i < 20; i++) await subscribe(project);
      const res = await project.api.post('/api/v1/webhooks', { url: receiver.url, events: ['*'] }).expect(409);
      expect(res.body.code).toBe('conflict');
      expect(await t.prisma.webhook.count({ where: { projectId: project.id } })).toBe(20);
    });
  });

  describe('delivery', () => {
    it('POSTs each subscribed event with the feed bytes, Standard Webhooks headers and a signature standardwebhooks verifies', async () => {
      const project = await createProject(t, 'Webhooks signature');
      const { webhook, secret } = await subscribe(project, { events: ['task.created'] });
      const task = await createTask(project, { title: 'Signed' });
      await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Not subscribed' }).expect(200);
      const [request] = await receiver.waitFor(1);
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hooks');
      expect(request.headers['content-type']).toBe('application/json');
      // After createProject's set-up (2 member.created, 3 label.created), made before the subscription.
      const feed = await project.api.get('/api/v1/events?after=5').expect(200);
      const event = feed.body.events[0];
      expect(request.headers['webhook-id']).toBe(event.id);
      expect(Number(request.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(new StandardWebhook(secret).verify(request.body, request.headers)).toEqual(event);
      // The same bytes as the change feed serves.
      expect(feed.text).toContain(request.body);
      expect(() => new StandardWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(request.body, request.headers)).toThrow();
      expect(() => new StandardWebhook(secret).verify(request.body.replace('Signed', 'Forged'), request.headers)).toThrow();

      await sleep(200);
      expect(receiver.received).toHaveLength(1);
      const deliveries = await deliveriesOf(project, webhook.id);
      expect(deliveries).toEqual([
        {
          id: expect.any(String),
          eventId: event.id,
          eventType: 'task.created',
          status: 'succeeded',
          attempts: 1,
          lastAttemptAt: expect.stringMatching(ISO_TIMESTAMP),
          nextAttemptAt: null,
          responseStatus: 200,
          error: null,
        },
      ]);
    });

    it('["*"] delivers every type, one delivery per event, and each webhook of the project gets its own', async () => {
      const project = await createProject(t, 'Webhooks star');
      const all = await subscribe(project);
      const sprintsOnly = await subscribe(project, { events: ['sprint.created'] });
      await project.api.post('/api/v1/sprints', { name: 'S1' }).expect(201);
      const parent = await createTask(project);
      await createTask(project, { parentId: parent.id });
      await project.api.delete(`/api/v1/tasks/${parent.id}`).expect(204);
      await receiver.waitFor(6);
      await sleep(200);
      const types = receiver.received.map((request) => JSON.parse(request.body).type).sort();
      expect(types).toEqual(['sprint.created', 'sprint.created', 'task.created', 'task.created', 'task.deleted', 'task.deleted']);
      expect((await deliveriesOf(project, all.webhook.id)).map((delivery) => delivery.eventType).sort()).toEqual([
        'sprint.created',
        'task.created',
        'task.created',
        'task.deleted',
        'task.deleted',
      ]);
      expect((await deliveriesOf(project, sprintsOnly.webhook.id)).map((delivery) => delivery.eventType)).toEqual(['sprint.created']);
    });

    it('delivers label and member events to the webhooks subscribed to them, as the feed has them', async () => {
      const project = await createProject(t, 'Webhooks labels and members');
      const { webhook } = await subscribe(project, { events: ['label.updated', 'member.created'] });
      expect(webhook.events).toEqual(['label.updated', 'member.created']);
      await asAdmin(t).patch(`/admin/v1/labels/${project.labels[0].id}`, { name: 'defect' }).expect(200);
      await asAdmin(t).post(`/admin/v1/projects/${project.id}/members`, { name: 'Linus' }).expect(201);
      await project.api.post('/api/v1/sprints', { name: 'Not subscribed' }).expect(201);
      await receiver.waitFor(2);
      await sleep(200);
      // At least once, in any order: receivers order by sequence.
      const delivered = receiver.received.map((request) => JSON.parse(request.body)).sort((a, b) => a.sequence - b.sequence);
      expect(delivered.map((event) => [event.type, event.actor])).toEqual([
        ['label.updated', 'App'],
        ['member.created', 'App'],
      ]);
      const feed = (await project.api.get('/api/v1/events?after=5').expect(200)).body.events;
      expect(delivered).toEqual(feed.slice(0, 2));
    });

    it('retries a receiver that answers 500 twice, after each delay of the schedule, and the log shows every attempt', async () => {
      receiver.answer = (n) => (n <= 2 ? 500 : 200);
      const project = await createProject(t, 'Webhooks retries');
      const { webhook, secret } = await subscribe(project);
      await createTask(project);
      await receiver.waitFor(1);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].attempts === 1, 5000, 'the first attempt recorded');
      const [afterFirst] = await deliveriesOf(project, webhook.id);
      expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1, responseStatus: 500, error: expect.stringContaining('500') });
      const gap = Date.parse(afterFirst.nextAttemptAt as string) - Date.parse(afterFirst.lastAttemptAt as string);
      expect(gap).toBeGreaterThanOrEqual(RETRY_SCHEDULE[0]);
      expect(gap).toBeLessThan(RETRY_SCHEDULE[0] + TIMEOUT_MS);

      const requests = await receiver.waitFor(3);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].status === 'succeeded', 5000, 'the delivery to succeed');
      expect(requests[1].at - requests[0].at).toBeGreaterThanOrEqual(RETRY_SCHEDULE[0]);
      expect(requests[2].at - requests[1].at).toBeGreaterThanOrEqual(RETRY_SCHEDULE[1]);
      // One event, one webhook-id; each attempt signed anew with its own timestamp.
      expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).toBe(1);
      for (const request of requests) expect(() => new StandardWebhook(secret).verify(request.body, request.headers)).not.toThrow();
      const [delivery] = await deliveriesOf(project, webhook.id);
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3, responseStatus: 200, error: null, nextAttemptAt: null });
      expect(Date.parse(delivery.lastAttemptAt as string)).toBeGreaterThan(Date.parse(afterFirst.lastAttemptAt as string));
      await sleep(RETRY_SCHEDULE[1]);
      expect(receiver.received).toHaveLength(3);
      expect((await t.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).failingSince).toBeNull();
    });

    it('gives up after the last delay of the schedule: the delivery is failed and the webhook marked failing', async () => {
      receiver.answer = () => 503;
      const project = await createProject(t, 'Webhooks give up');
      const { webhook } = await subscribe(project);
      await createTask(project);
      await receiver.waitFor(RETRY_SCHEDULE.length + 1);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].status === 'failed', 5000, 'the delivery to fail');
      await sleep(RETRY_SCHEDULE[RETRY_SCHEDULE.length - 1] + 200);
      expect(receiver.received).toHaveLength(RETRY_SCHEDULE.length + 1);
      const [delivery] = await deliveriesOf(project, webhook.id);
      expect(delivery).toMatchObject({
        status: 'failed',
        attempts: 3,
        responseStatus: 503,
        nextAttemptAt: null,
        error: expect.stringContaining('503'),
      });
      const row = await t.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.id } });
      expect(row.failingSince).not.toBeNull();
      expect(row.enabled).toBe(true);
    });

    it('treats a redirect as a failed attempt and never follows it', async () => {
      receiver.answer = () => ({ status: 302, headers: { location: '/elsewhere' } });
      const project = await createProject(t, 'Webhooks redirect');
      const { webhook } = await subscribe(project);
      await createTask(project);
      await receiver.waitFor(1);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].attempts === 1, 5000, 'the first attempt recorded');
      const [delivery] = await deliveriesOf(project, webhook.id);
      expect(delivery).toMatchObject({ responseStatus: 302, error: expect.stringContaining('redirect') });
      // Never to /elsewhere (a retry of /hooks may have come by now).
      expect(receiver.received.every((request) => request.path === '/hooks')).toBe(true);
    });

    it('counts no answer within WEBHOOK_TIMEOUT_MS as a failed attempt', async () => {
      receiver.answer = (n) => (n === 1 ? 'hang' : 200);
      const project = await createProject(t, 'Webhooks timeout');
      const { webhook } = await subscribe(project);
      await createTask(project);
      await receiver.waitFor(2, 5000);
      const firstTwo = receiver.received.slice(0, 2);
      // The timeout counts from the start of the attempt, a little before the first request arrived whole.
      expect(firstTwo[1].at - firstTwo[0].at).toBeGreaterThanOrEqual(TIMEOUT_MS + RETRY_SCHEDULE[0] - 100);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].status === 'succeeded', 5000, 'the delivery to succeed');
      expect((await t.prisma.webhookDelivery.findFirstOrThrow({ where: { webhookId: webhook.id } })).attempts).toBe(2);
    });

    it('records a refused connection as a failed attempt with its reason', async () => {
      const project = await createProject(t, 'Webhooks refused');
      const closed = await startReceiver();
      await closed.close();
      const { webhook } = await subscribe(project, { url: closed.url });
      await createTask(project);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0]?.attempts === 1, 5000, 'the first attempt recorded');
      const [delivery] = await deliveriesOf(project, webhook.id);
      expect(delivery).toMatchObject({ status: 'pending', responseStatus: null, error: expect.stringContaining('ECONNREFUSED') });
    });
  });

  describe('redeliver', () => {
    it('sends a succeeded delivery again at once, with the same webhook-id, and answers it queued (202)', async () => {
      const project = await createProject(t, 'Redeliver succeeded');
      const { webhook } = await subscribe(project);
      await createTask(project);
      await receiver.waitFor(1);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].status === 'succeeded', 5000, 'the delivery to succeed');
      const [delivery] = await deliveriesOf(project, webhook.id);
      const res = await project.api.post(`/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`).expect(202);
      expect(res.body).toEqual({ delivery: { ...delivery, status: 'pending', nextAttemptAt: expect.stringMatching(ISO_TIMESTAMP) } });
      const requests = await receiver.waitFor(2);
      expect(requests[1].headers['webhook-id']).toBe(requests[0].headers['webhook-id']);
      expect(requests[1].body).toBe(requests[0].body);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].attempts === 2, 5000, 'the second attempt recorded');
      expect((await deliveriesOf(project, webhook.id))[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    });

    it('gives a failed delivery one more attempt, without retries', async () => {
      receiver.answer = () => 500;
      const project = await createProject(t, 'Redeliver failed');
      const { webhook } = await subscribe(project);
      await createTask(project);
      await receiver.waitFor(3);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].status === 'failed', 5000, 'the delivery to fail');
      const [delivery] = await deliveriesOf(project, webhook.id);
      await project.api.post(`/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`).expect(202);
      await receiver.waitFor(4);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].status === 'failed', 5000, 'the redelivery to fail');
      await sleep(RETRY_SCHEDULE[0] + 200);
      expect(receiver.received).toHaveLength(4);
      expect((await deliveriesOf(project, webhook.id))[0]).toMatchObject({ status: 'failed', attempts: 4, nextAttemptAt: null });
    });

    it('makes a pending delivery due now; it keeps the rest of its retry schedule', async () => {
      // An app whose first retry waits a minute: the attempt made now can only be the redelivery
      // (with the file's 300 ms, a loaded machine saw the scheduled retry come first).
      const waiting = await startTestApp({ webhookAllowPrivateUrls: true, webhookRetrySchedule: [60_000, 300], webhookTimeoutMs: TIMEOUT_MS });
      try {
        receiver.answer = () => 500;
        const project = await createProject(waiting, 'Redeliver pending');
        const { webhook } = await subscribe(project);
        await createTask(project);
        await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0]?.attempts === 1, 5000, 'the first attempt recorded');
        const [delivery] = await deliveriesOf(project, webhook.id);
        expect(delivery).toMatchObject({ status: 'pending' });
        await project.api.post(`/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`).expect(202);
        // Attempt 2 (now, not a minute later) and attempt 3 (the schedule's second delay later), then failed.
        await receiver.waitFor(3);
        await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].status === 'failed', 5000, 'the delivery to fail');
        expect((await deliveriesOf(project, webhook.id))[0]).toMatchObject({ attempts: 3 });
        expect(receiver.received).toHaveLength(3);
      } finally {
        await waiting.close();
      }
    });

    it('is 409 while the webhook is disabled', async () => {
      const project = await createProject(t, 'Redeliver disabled');
      const { webhook } = await subscribe(project);
      await createTask(project);
      await receiver.waitFor(1);
      const [delivery] = await deliveriesOf(project, webhook.id);
      await project.api.patch(`/api/v1/webhooks/${webhook.id}`, { enabled: false }).expect(200);
      const res = await project.api.post(`/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`).expect(409);
      expect(res.body.code).toBe('conflict');
      await sleep(200);
      expect(receiver.received).toHaveLength(1);
    });
  });

  describe('disabled webhooks', () => {
    it('a disabled webhook gets no deliveries; enabled again, it gets the events from then on', async () => {
      const project = await createProject(t, 'Webhooks disabled');
      const { webhook } = await subscribe(project);
      await project.api.patch(`/api/v1/webhooks/${webhook.id}`, { enabled: false }).expect(200);
      await createTask(project, { title: 'While disabled' });
      await sleep(300);
      expect(receiver.received).toHaveLength(0);
      expect(await t.prisma.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(0);
      await project.api.patch(`/api/v1/webhooks/${webhook.id}`, { enabled: true }).expect(200);
      await createTask(project, { title: 'Enabled again' });
      const [request] = await receiver.waitFor(1);
      expect(JSON.parse(request.body).data.task.title).toBe('Enabled again');
    });

    it('disabling closes the pending deliveries as failed', async () => {
      receiver.answer = () => 500;
      const project = await createProject(t, 'Webhooks disabling');
      const { webhook } = await subscribe(project);
      await createTask(project);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0]?.attempts === 1, 5000, 'the first attempt recorded');
      await project.api.patch(`/api/v1/webhooks/${webhook.id}`, { enabled: false }).expect(200);
      expect((await deliveriesOf(project, webhook.id))[0]).toMatchObject({
        status: 'failed',
        attempts: 1,
        nextAttemptAt: null,
        error: WEBHOOK_DISABLED_ERROR,
      });
      await sleep(RETRY_SCHEDULE[0] + 300);
      expect(receiver.received).toHaveLength(1);
    });

    it('disables a webhook whose every attempt has failed for 5 days, and closes its pending deliveries', async () => {
      receiver.answer = () => 500;
      const project = await createProject(t, 'Webhooks failing');
      const { webhook } = await subscribe(project);
      await t.prisma.webhook.update({ where: { id: webhook.id }, data: { failingSince: new Date(Date.now() - 5 * 24 * 3600 * 1000 - 60_000) } });
      await createTask(project);
      await receiver.waitFor(1);
      await waitUntil(
        async () => !(await project.api.get(`/api/v1/webhooks/${webhook.id}`)).body.webhook.enabled,
        5000,
        'the webhook to be disabled',
      );
      expect((await deliveriesOf(project, webhook.id))[0]).toMatchObject({ status: 'failed', attempts: 1, responseStatus: 500 });
      await createTask(project);
      await sleep(RETRY_SCHEDULE[0] + 300);
      expect(receiver.received).toHaveLength(1);
      expect(await t.prisma.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(1);

      // Enabled again: the five days start afresh.
      receiver.answer = () => 200;
      await project.api.patch(`/api/v1/webhooks/${webhook.id}`, { enabled: true }).expect(200);
      expect((await t.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).failingSince).toBeNull();
    });

    it('a webhook failing for less than 5 days stays enabled, and a success clears its failing mark', async () => {
      receiver.answer = (n) => (n === 1 ? 500 : 200);
      const project = await createProject(t, 'Webhooks recovering');
      const { webhook } = await subscribe(project);
      await t.prisma.webhook.update({ where: { id: webhook.id }, data: { failingSince: new Date(Date.now() - 4 * 24 * 3600 * 1000) } });
      await createTask(project);
      await receiver.waitFor(2);
      await waitUntil(async () => (await deliveriesOf(project, webhook.id))[0].status === 'succeeded', 5000, 'the delivery to succeed');
      expect(await t.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ enabled: true, failingSince: null });
    });
  });

  describe('delivery log', () => {
    it('lists deliveries newest first, paginated by cursor', async () => {
      const project = await createProject(t, 'Webhooks log pages');
      const { webhook } = await subscribe(project);
      for (const title of ['One', 'Two', 'Three']) await createTask(project, { title });
      await receiver.waitFor(3);
      const first = await project.api.get(`/api/v1/webhooks/${webhook.id}/deliveries?limit=2`).expect(200);
      expect(first.body.deliveries).toHaveLength(2);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await project.api.get(`/api/v1/webhooks/${webhook.id}/deliveries?limit=2&cursor=${first.body.nextCursor}`).expect(200);
      expect(second.body).toEqual({ deliveries: [expect.any(Object)], nextCursor: null });
      // After createProject's set-up, made before the subscription.
      const feed = (await project.api.get('/api/v1/events?after=5').expect(200)).body.events as { id: string }[];
      const listed = [...first.body.deliveries, ...second.body.deliveries].map((delivery: { eventId: string }) => delivery.eventId);
      expect(listed).toEqual(feed.map((event) => event.id).reverse());

      const bad = await project.api.get(`/api/v1/webhooks/${webhook.id}/deliveries?cursor=${first.body.nextCursor}x`).expect(400);
      expect(bad.body.code).toBe('invalid_cursor');
      expect((await project.api.get(`/api/v1/webhooks/${webhook.id}/deliveries?limit=0`).expect(400)).body.code).toBe('validation_failed');
    });
  });

  describe('OpenAPI', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let document: any;
    beforeAll(async () => {
      // Answers as a client reads them: the shared ones (components/responses) in place.
      document = withAnswersResolved((await t.http.get('/docs/openapi.json').expect(200)).body);
    });

    it.each([
      ['get', '/api/v1/webhooks', null, '200'],
      ['post', '/api/v1/webhooks', 'webhooks:manage', '201'],
      ['get', '/api/v1/webhooks/{webhookId}', null, '200'],
      ['patch', '/api/v1/webhooks/{webhookId}', 'webhooks:manage', '200'],
      ['delete', '/api/v1/webhooks/{webhookId}', 'webhooks:manage', '204'],
      ['get', '/api/v1/webhooks/{webhookId}/deliveries', null, '200'],
      ['post', '/api/v1/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', 'webhooks:manage', '202'],
    ])('documents %s %s with the bearer key, its answer and problem+json errors', (method, path, permission, success) => {
      const operation = document.paths[path]?.[method];
      expect(operation).toBeDefined();
      expect(operation.security).toEqual([{ 'api-key': [] }]);
      expect(operation.summary).toEqual(expect.any(String));
      for (const status of ['400', '401', '429', '500', ...(permission ? ['403'] : [])]) {
        expect(operation.responses[status]?.content?.['application/problem+json']?.schema.$ref).toBe('#/components/schemas/ProblemDto');
      }
      if (path.includes('{')) expect(operation.responses['404']).toBeDefined();
      expect(operation.responses[success]).toBeDefined();
      if (success !== '204') expect(operation.responses[success].content?.['application/json']?.schema.$ref).toMatch(/Dto$/);
      if (method === 'patch' || (method === 'post' && !path.endsWith('/redeliver'))) {
        expect(operation.requestBody?.content['application/json'].schema.$ref).toMatch(/Dto$/);
      }
    });

    it('describes a webhook, a delivery and what a create takes', () => {
      const schemas = document.components.schemas;
      expect(Object.keys(schemas.WebhookDto.properties).sort()).toEqual(['createdAt', 'description', 'enabled', 'events', 'id', 'url']);
      expect(Object.keys(schemas.CreatedWebhookDto.properties).sort()).toEqual(['secret', 'webhook']);
      expect(Object.keys(schemas.WebhookDeliveryDto.properties).sort()).toEqual(
        ['attempts', 'error', 'eventId', 'eventType', 'id', 'lastAttemptAt', 'nextAttemptAt', 'responseStatus', 'status'].sort(),
      );
      expect(schemas.WebhookDeliveryDto.properties.status.enum).toEqual(['pending', 'succeeded', 'failed']);
      expect(schemas.CreateWebhookDto.required.sort()).toEqual(['events', 'url']);
      expect(schemas.CreateWebhookDto.properties.events.items.enum).toContain('*');
      expect(schemas.UpdateWebhookDto.required ?? []).toEqual([]);
      expect(Object.keys(schemas.UpdateWebhookDto.properties).sort()).toEqual(['description', 'enabled', 'events', 'url']);
    });

    it('describeWebhookDeliveries documents what a webhook URL receives, as a callback of the create', () => {
      const copy = JSON.parse(JSON.stringify(document)) as OpenAPIObject;
      describeWebhookDeliveries(copy);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const delivery = (copy.paths['/api/v1/webhooks'].post!.callbacks!.event as any)['{$request.body#/url}'].post;
      expect(delivery.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/EventDto');
      expect(copy.components!.schemas!.EventDto).toBeDefined();
      expect(delivery.parameters.map((parameter: { name: string }) => parameter.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
    });
  });
});
