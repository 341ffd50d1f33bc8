import { networkInterfaces } from 'node:os';
import { ConfigError, loadConfig } from '../src/config/app-config';
import { asAdmin, useProject } from './support/fixtures';
import { startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process';
import { useTestApp } from './support/test-app';

// The HOST rule's server, a process of its own: started before anything else, so that it boots
// beside this file's apps rather than after them.
let hostServer: Promise<ServerProcess>;
beforeAll(() => {
  hostServer = startServerProcess({ HOST: '127.0.0.1', DATA_DIR: 'memory://' });
  hostServer.catch(() => undefined); // awaited (and failing) in its test
});
afterAll(async () => stopServerProcess(await hostServer.catch(() => undefined)));

// decisions.md section 22: what browsers need from every answer.
const EXPOSED = 'ETag,Location,Retry-After,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,X-Request-Id,Idempotent-Replayed';

describe('CORS, nosniff and Cache-Control (any origin by default)', () => {
  const t = useTestApp({ webhookAllowPrivateUrls: true });
  const project = useProject(t);

  it('answers a preflight 204 without a key, for any origin, with the methods and headers asked', async () => {
    const res = await t.http
      .options('/api/v1/tasks/0b9f4c5e-2f0a-4c8e-9a57-1f3d2b6c7a10')
      .set('Origin', 'https://board.example.org')
      .set('Access-Control-Request-Method', 'PATCH')
      .set('Access-Control-Request-Headers', 'authorization, content-type, if-match, idempotency-key')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toContain('PATCH');
    expect(res.headers['access-control-allow-headers']).toBe('authorization, content-type, if-match, idempotency-key');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(res.text).toBe('');
  });

  it('lets a page of any origin read the answer and the headers it needs, named one by one', async () => {
    const res = await project.api.post('/api/v1/tasks', { title: 'From a browser' }).set('Origin', 'https://board.example.org').expect(201);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-expose-headers']).toBe(EXPOSED);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    // Errors too: a page shows the problem.
    const refused = await t.http.get('/api/v1/tasks').set('Origin', 'https://board.example.org').expect(401);
    expect(refused.headers['access-control-allow-origin']).toBe('*');
  });

  it('serves the OpenAPI document to pages of other origins, and the admin interface to none', async () => {
    const document = await t.http.get('/docs/openapi.json').set('Origin', 'https://editor.example.org').expect(200);
    expect(document.headers['access-control-allow-origin']).toBe('*');
    const admin = await asAdmin(t).post('/admin/v1/projects', { name: 'P' }).set('Origin', 'https://board.example.org').expect(201);
    expect(admin.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends X-Content-Type-Options: nosniff on every answer', async () => {
    const answers = [
      await project.api.get('/api/v1/tasks').expect(200),
      await t.http.get('/api/v1/tasks').expect(401),
      await project.api.get('/api/v1/nothing-here').expect(404),
      await asAdmin(t).post('/admin/v1/projects', { name: 'P' }).expect(201),
      await t.http.get('/health').expect(200),
      await t.http.get('/no-such-path').expect(404),
      await t.http.get('/docs/openapi.json').expect(200),
      await t.http.options('/api/v1/tasks').set('Origin', 'https://a.example').set('Access-Control-Request-Method', 'GET').expect(204),
    ];
    expect(answers.map((res) => [res.status, res.headers['x-content-type-options']])).toEqual(answers.map((res) => [res.status, 'nosniff']));
  });

  it('marks /api/v1 and /admin/v1 answers private, no-cache, and the others not', async () => {
    const task = (await project.api.post('/api/v1/tasks', { title: 'Cached?' }).expect(201)).body.task;
    const read = await project.api.get(`/api/v1/tasks/${task.id}`).expect(200);
    expect(read.headers['cache-control']).toBe('private, no-cache');
    const notModified = await project.api.get(`/api/v1/tasks/${task.id}`).set('If-None-Match', read.headers.etag).expect(304);
    expect(notModified.headers['cache-control']).toBe('private, no-cache');
    expect((await t.http.get('/api/v1/tasks').expect(401)).headers['cache-control']).toBe('private, no-cache');
    expect((await asAdmin(t).post('/admin/v1/projects', { name: 'P' }).expect(201)).headers['cache-control']).toBe('private, no-cache');
    expect((await t.http.get('/health').expect(200)).headers['cache-control']).toBeUndefined();
  });

  it('sends Cache-Control: no-store on an answer that shows a secret, replays included', async () => {
    const key = await asAdmin(t).post(`/admin/v1/projects/${project.id}/keys`, { name: 'Secret', permissions: [] }).expect(201);
    expect(key.body.secret).toMatch(/^tsk_/);
    expect(key.headers['cache-control']).toBe('no-store');
    const body = { url: 'http://127.0.0.1:9/hooks', events: ['sprint.closed'] };
    const created = await project.api.post('/api/v1/webhooks', body).set('Idempotency-Key', 'no-store-webhook').expect(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.headers['cache-control']).toBe('no-store');
    const replayed = await project.api.post('/api/v1/webhooks', body).set('Idempotency-Key', 'no-store-webhook').expect(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.headers['cache-control']).toBe('no-store');
    // The same webhook read back shows no secret: the usual header.
    const read = await project.api.get(`/api/v1/webhooks/${created.body.webhook.id}`).expect(200);
    expect(read.headers['cache-control']).toBe('private, no-cache');
  });
});

describe('CORS_ORIGINS', () => {
  const t = useTestApp({ corsOrigins: ['https://board.example.org', 'http://localhost:5173'] });
  const project = useProject(t);

  it('lets only the listed origins read answers, and tells caches the answer depends on Origin', async () => {
    const allowed = await project.api.get('/api/v1/tasks').set('Origin', 'http://localhost:5173').expect(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(allowed.headers['access-control-expose-headers']).toBe(EXPOSED);
    expect(allowed.headers.vary).toMatch(/Origin/);
    const other = await project.api.get('/api/v1/tasks').set('Origin', 'https://evil.example').expect(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await t.http
      .options('/api/v1/tasks')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST')
      .expect(204);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('reads the list once at start, and refuses an entry that is not an origin', () => {
    expect(loadConfig({}).corsOrigins).toBeNull();
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).corsOrigins).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
    for (const bad of ['https://a.example/', 'a.example', 'https://a.example/app', '*']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS/);
    }
  });
});

describe('HOST', () => {
  it('listens on every interface by default, and on HOST alone when it is set', async () => {
    expect(loadConfig({}).host).toBeNull();
    const server = await hostServer;
    expect(server.stdout()).toMatch(/"msg":"Listening on http:\/\/127\.0\.0\.1:\d+ /);
    expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
    // Another address of this machine, where there is one, finds nobody listening.
    const other = Object.values(networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal);
    if (other) {
      const port = new URL(server.baseUrl).port;
      await expect(fetch(`http://${other.address}:${port}/health`)).rejects.toThrow();
    }
  });
});
