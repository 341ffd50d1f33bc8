import { randomBytes } from 'node:crypto';
import { createProject, createTask, TestProject } from './support/fixtures';
import { useTestApp } from './support/test-app';
import { sleep, startReceiver, waitUntil } from './support/webhook-receiver';

/** Where webhooks may send, as a deployment without WEBHOOK_ALLOW_PRIVATE_URLS has it. */
describe('webhook targets (SSRF guard)', () => {
  const t = useTestApp({ webhookRetrySchedule: [60_000], webhookTimeoutMs: 1000 });
  let project: TestProject;
  beforeAll(async () => {
    expect(t.config.webhookAllowPrivateUrls).toBe(false);
    project = await createProject(t, 'Webhook targets');
  });

  const create = (url: string) => project.api.post('/api/v1/webhooks', { url, events: ['*'] });

  it.each([
    ['http://127.0.0.1/hook', 'https://'],
    ['http://169.254.169.254/latest/meta-data/', 'https://'],
    ['http://[::1]/hook', 'https://'],
    ['http://10.0.0.1/hook', 'https://'],
    ['http://1.1.1.1/hook', 'https://'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://127.1.2.3:8443/hook', 'loopback'],
    ['https://2130706433/hook', 'loopback'],
    ['https://0x7f.1/hook', 'loopback'],
    ['https://169.254.169.254/latest/meta-data/', 'link-local'],
    ['https://[::1]/hook', 'loopback'],
    ['https://10.0.0.1/hook', 'private'],
    ['https://172.16.5.4/hook', 'private'],
    ['https://192.168.1.1/hook', 'private'],
    ['https://100.64.0.1/hook', 'private'],
    ['https://0.0.0.0/hook', 'unspecified'],
    ['https://224.0.0.1/hook', 'multicast'],
    ['https://[fe80::1]/hook', 'link-local'],
    ['https://[fd00:ec2::254]/hook', 'private'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['https://[::ffff:a9fe:a9fe]/hook', 'link-local'],
    ['https://[::]/hook', 'unspecified'],
    ['https://localhost/hook', 'resolves to'],
    ['https://user:secret@1.1.1.1/hook', 'user name'],
    ['ftp://1.1.1.1/hook', 'https://'],
    ['/relative/hook', 'absolute URL'],
  ])('refuses %s with 400 invalid_webhook_url', async (url, reason) => {
    const res = await create(url).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: 'invalid_webhook_url', errors: [{ field: 'url', message: expect.stringContaining(reason) }] });
    expect(await t.prisma.webhook.count({ where: { projectId: project.id } })).toBe(0);
  });

  it('accepts an https:// URL of a public address', async () => {
    const other = await createProject(t, 'Webhook targets public');
    const res = await other.api.post('/api/v1/webhooks', { url: 'https://1.1.1.1/hooks', events: ['task.created'] }).expect(201);
    expect(res.body.webhook.url).toBe('https://1.1.1.1/hooks');
  });

  it('refuses a PATCH to a private address and changes nothing', async () => {
    const other = await createProject(t, 'Webhook targets patch');
    const { webhook } = (await other.api.post('/api/v1/webhooks', { url: 'https://1.1.1.1/hooks', events: ['task.created'] }).expect(201)).body;
    const res = await other.api.patch(`/api/v1/webhooks/${webhook.id}`, { url: 'https://[::1]/hooks', description: 'changed' }).expect(400);
    expect(res.body.code).toBe('invalid_webhook_url');
    expect((await other.api.get(`/api/v1/webhooks/${webhook.id}`)).body.webhook).toEqual(webhook);
    // 400 before 404: the url is judged before the webhook is looked for.
    expect((await other.api.patch('/api/v1/webhooks/00000000-0000-4000-8000-000000000000', { url: 'https://[::1]/' })).status).toBe(400);
  });

  it('checks again at each attempt: a stored URL whose host is or resolves to loopback fails without any request', async () => {
    const receiver = await startReceiver();
    try {
      const other = await createProject(t, 'Webhook targets delivery');
      const port = new URL(receiver.url).port;
      // As if the host had resolved to a public address when the webhook was created.
      const stored = [];
      for (const url of [`https://127.0.0.1:${port}/hooks`, `https://localhost:${port}/hooks`, `http://localhost:${port}/hooks`]) {
        stored.push(
          await t.prisma.webhook.create({ data: { projectId: other.id, url, events: ['*'], secret: `whsec_${randomBytes(32).toString('base64')}` } }),
        );
      }
      await createTask(other);
      const attempted = () => t.prisma.webhookDelivery.findMany({ where: { projectId: other.id, attempts: { gt: 0 } } });
      await waitUntil(async () => (await attempted()).length === 3, 5000, 'three attempts');
      const byWebhook = new Map((await attempted()).map((delivery) => [delivery.webhookId, delivery]));
      expect(byWebhook.get(stored[0].id)).toMatchObject({
        status: 'pending',
        responseStatus: null,
        error: expect.stringMatching(/^refused: .*loopback/),
      });
      expect(byWebhook.get(stored[1].id)).toMatchObject({ status: 'pending', error: expect.stringMatching(/^refused: host localhost resolves to/) });
      expect(byWebhook.get(stored[2].id)).toMatchObject({ status: 'pending', error: expect.stringMatching(/^refused: .*https:\/\//) });
      await sleep(100);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});
