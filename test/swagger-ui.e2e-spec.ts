import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { AdminService } from '../src/admin/admin.service';
import { ALL_PERMISSIONS } from '../src/auth/permissions';
import { KeyClient, withKey } from './support/fixtures';
import { startTestApp, TestApp } from './support/test-app';

// Debian's chromium (CI installs it: .ci/run). playwright-core drives it; it downloads no browser of its own.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const hasChromium = existsSync(CHROMIUM);
const describeInBrowser = hasChromium ? describe : describe.skip;
if (!hasChromium) {
  console.warn(`Skipping the Swagger UI browser test: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
}

describeInBrowser(`Swagger UI at /docs, as a newcomer uses it in Chromium${hasChromium ? '' : ` (skipped: no ${CHROMIUM})`}`, () => {
  let t: TestApp;
  let project: { key: string; api: KeyClient };
  let baseUrl: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    // Without ADMIN_TOKEN, as `npm start` runs by default: the project is set up in-process, as the demo's is.
    t = await startTestApp({ adminToken: null });
    const admin = t.app.get(AdminService);
    const { project: created } = await admin.createProject({ name: 'Swagger UI' });
    const { secret } = await admin.issueKey(created.id, { name: 'Browser', permissions: [...ALL_PERMISSIONS] });
    project = { key: secret, api: withKey(t, secret) };
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    // A fresh profile: nothing remembered from another run (persistAuthorization keeps the key in it).
    profile = mkdtempSync(path.join(tmpdir(), 'swagger-ui-chromium-'));
    browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
    page = browser.pages()[0] ?? (await browser.newPage());
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await t?.close();
  });

  /** Expands an operation, clicks Try it out, fills the path parameters, clicks Execute once: the answer's status and body. */
  async function tryItOut(operation: string, pathParameters: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
    const block = page.locator(`#${operation}`);
    if (!(await block.locator('.opblock-body').isVisible())) await block.locator('.opblock-summary').first().click();
    await block.locator('button.try-out__btn').click();
    for (const [name, value] of Object.entries(pathParameters)) await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
    const answered = page.waitForResponse((response) => response.url().startsWith(`${baseUrl}/api/v1/`) && response.request().method() !== 'OPTIONS');
    await block.locator('button.execute').click();
    const response = await answered;
    const text = await response.text();
    // What the page shows is what came back.
    const shown = block.locator('.live-responses-table tbody .response-col_status').first();
    await shown.waitFor();
    expect(await shown.innerText()).toContain(String(response.status()));
    return { status: response.status(), body: text ? JSON.parse(text) : null };
  }

  it('authorizes with a project key, and keeps it across a reload', async () => {
    await page.goto(`${baseUrl}/docs`);
    await page.locator('#operations-tasks-listTasks').waitFor();
    await page.locator('button.authorize').first().click();
    const apiKey = page.locator('.auth-container').filter({ hasText: 'api-key' });
    await apiKey.locator('input').fill(project.key);
    await apiKey.locator('button.authorize').click();
    await page.locator('.modal-ux button.btn-done').first().click();
    await page.reload();
    await page.locator('#operations-tasks-listTasks').waitFor();
    // persistAuthorization keeps it in the page's storage; the Execute below (after this reload) sends it.
    expect(await page.evaluate("localStorage.getItem('authorized')")).toContain(project.key);
  });

  it('offers only the api-key scheme in Authorize when the document has no admin operation (ADMIN_TOKEN unset)', async () => {
    await page.goto(`${baseUrl}/docs`);
    await page.locator('#operations-tasks-listTasks').waitFor();
    await page.locator('button.authorize').first().click();
    const schemes = await page.locator('.modal-ux .auth-container h4').allInnerTexts();
    expect(schemes.map((text) => text.trim().split(/\s/)[0])).toEqual(['api-key']);
    await page.locator('.modal-ux button.btn-done').first().click();
  });

  it('lists tasks on the first Execute, with no filter filled in', async () => {
    await project.api.post('/api/v1/tasks', { title: 'Already there' }).expect(201);
    const { status, body } = await tryItOut('operations-tasks-listTasks');
    expect(status).toBe(200);
    expect((body as { total: number }).total).toBeGreaterThan(0);
  });

  let taskId: string;
  it('creates a task with the offered example, patches it with its example, and sends it to the trash', async () => {
    const created = await tryItOut('operations-tasks-createTask');
    expect(created.status).toBe(201);
    taskId = (created.body as { task: { id: string } }).task.id;
    const patched = await tryItOut('operations-tasks-updateTask', { taskId });
    expect(patched.status).toBe(200);
    expect((patched.body as { task: { status: string } }).task.status).toBe('in_progress');
    const trashed = await tryItOut('operations-tasks-trashTask', { taskId });
    expect(trashed.status).toBe(204);
  });

  it('creates tasks in bulk and a sprint with the offered examples, and reads the feed', async () => {
    expect((await tryItOut('operations-tasks-bulkCreateTasks')).status).toBe(201);
    expect((await tryItOut('operations-sprints-createSprint')).status).toBe(201);
    const feed = await tryItOut('operations-events-listEvents');
    expect(feed.status).toBe(200);
    expect((feed.body as { events: { type: string }[] }).events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['task.created', 'task.updated', 'task.deleted', 'sprint.created']),
    );
  });

  it('shows GET /api/v1/tasks expanded in under 2 500 px: each error status once, short, only those it can give', async () => {
    await page.goto(`${baseUrl}/docs`);
    const block = page.locator('#operations-tasks-listTasks');
    await block.waitFor();
    if (!(await block.locator('.opblock-body').isVisible())) await block.locator('.opblock-summary').first().click();
    await block.locator('.responses-table').first().waitFor();
    const { height } = (await block.boundingBox())!;
    const statuses = await block
      .locator('.responses-table > tbody > tr.response')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-code')));
    expect(statuses).toEqual([...new Set(statuses)]);
    expect(statuses).not.toContain('413');
    expect(statuses).not.toContain('415');
    expect(height).toBeLessThan(2500);
  });

  it('shows assigneeId as one string type, not a union of three', async () => {
    const block = page.locator('#operations-tasks-listTasks');
    const type = await block.locator('tr[data-param-name="assigneeId"] .parameter__type').innerText();
    expect(type).not.toContain('|');
  });
});
