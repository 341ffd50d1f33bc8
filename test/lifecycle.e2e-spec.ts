import { Agent, request } from 'node:http';
import { type AddressInfo, connect, Socket } from 'node:net';
import { Client } from 'pg';
import { ConfigError, loadConfig } from '../src/config/app-config';
import { DrainState } from '../src/lifecycle/drain-state';
import { HttpDrain } from '../src/lifecycle/http-drain';
import { openEventStream } from './support/event-stream';
import { createProject } from './support/fixtures';
import { engine, startTestApp } from './support/test-app';

describe('configuration', () => {
  it('reads the defaults when nothing is set', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      databaseUrl: null,
      dataDir: './data',
      adminToken: null,
      rateLimitPerMinute: 1200,
      redisUrl: null,
      logLevel: 'info',
      logFormat: 'json',
      shutdownTimeoutMs: 10_000,
    });
  });

  it('reads LOG_LEVEL, LOG_FORMAT and SHUTDOWN_TIMEOUT_MS', () => {
    expect(loadConfig({ LOG_LEVEL: 'debug', LOG_FORMAT: 'pretty', SHUTDOWN_TIMEOUT_MS: '2500' })).toMatchObject({
      logLevel: 'debug',
      logFormat: 'pretty',
      shutdownTimeoutMs: 2500,
    });
  });

  it('enables the admin interface with any ADMIN_TOKEN, however short, and not with an empty one', () => {
    expect(loadConfig({ ADMIN_TOKEN: 'admin' }).adminToken).toBe('admin');
    expect(loadConfig({ ADMIN_TOKEN: '' }).adminToken).toBeNull();
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, /RATE_LIMIT_PER_MINUTE/],
    [{ DATABASE_URL: 'mysql://localhost/db' }, /DATABASE_URL/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL/],
    [{ LOG_LEVEL: 'verbose' }, /LOG_LEVEL/],
    [{ LOG_FORMAT: 'xml' }, /LOG_FORMAT/],
    [{ SHUTDOWN_TIMEOUT_MS: '10s' }, /SHUTDOWN_TIMEOUT_MS/],
    [{ SHUTDOWN_TIMEOUT_MS: '0' }, /SHUTDOWN_TIMEOUT_MS/],
  ])('stops the start with a message naming the variable for %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('graceful shutdown', () => {
  it('finishes the requests in flight, then stops accepting connections', async () => {
    const t = await startTestApp();
    const project = await createProject(t);
    await project.api.post('/api/v1/tasks/bulk', { tasks: Array.from({ length: 30 }, (_, i) => ({ title: `Task ${i}` })) }).expect(201);
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const url = `http://127.0.0.1:${port}/api/v1/tasks?limit=100`;
    let keyLookups = 0;
    t.prisma.onStatement((statement) => {
      if (/\bapi_keys\b/.test(statement)) keyLookups++;
    });
    const inFlight = Array.from({ length: 20 }, () => fetch(url, { headers: { Authorization: `Bearer ${project.key}` } }));
    // Every request has reached the service once its key was looked up.
    while (keyLookups < 20) await new Promise((resolve) => setTimeout(resolve, 1));
    const closing = t.close();
    const answers = await Promise.all(inFlight);
    expect(answers.map((res) => res.status)).toEqual(Array(20).fill(200));
    for (const res of answers) expect(((await res.json()) as { total: number }).total).toBe(30);
    await closing;
    await expect(fetch(url)).rejects.toThrow();
  });
});

/** Connections a server must not wait for when it closes: one that never sent a request, and a keep-alive one idle after its answer. */
async function idleConnections(baseUrl: string, port: number): Promise<{ silent: Socket; agent: Agent }> {
  const silent = connect(port, '127.0.0.1');
  await new Promise((resolve) => silent.once('connect', resolve));
  silent.on('error', () => undefined);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  await new Promise<void>((resolve, reject) =>
    request(`${baseUrl}/health`, { agent }, (res) => (res.resume(), res.once('end', resolve)))
      .once('error', reject)
      .end(),
  );
  return { silent, agent };
}

describe('closing with open connections', () => {
  it('app.close() ends the open event streams and closes idle connections at once, one that never sent a request too', async () => {
    const t = await startTestApp();
    const project = await createProject(t);
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const baseUrl = `http://127.0.0.1:${port}`;
    const { silent, agent } = await idleConnections(baseUrl, port);
    const streams = await Promise.all([1, 2].map(() => openEventStream(baseUrl, project.key)));
    const started = Date.now();
    await t.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await Promise.all(streams.map((stream) => stream.finished))).toEqual(['end', 'end']);
    silent.destroy();
    agent.destroy();
  });

  it('the drain closes a connection that never sent a request after its grace, not at the deadline', async () => {
    const t = await startTestApp();
    try {
      await t.app.listen(0, '127.0.0.1');
      const { port } = t.app.getHttpServer().address() as AddressInfo;
      const { silent, agent } = await idleConnections(`http://127.0.0.1:${port}`, port);
      const closed = new Promise((resolve) => silent.once('close', resolve));
      const started = Date.now();
      expect(await t.app.get(HttpDrain).drain(t.app.getHttpServer(), started + 30_000)).toBe(0);
      expect(Date.now() - started).toBeLessThan(5_000);
      await closed;
      agent.destroy();
    } finally {
      await t.close();
    }
  });
});

describe('draining', () => {
  it('answers /ready 503 at once when draining starts, keeps serving the other requests, each answer with Connection: close', async () => {
    const t = await startTestApp();
    try {
      const project = await createProject(t);
      const before = await t.http.get('/ready').set('Connection', 'keep-alive').expect(200);
      expect(before.headers.connection).toBe('keep-alive');
      const drain = t.app.get(DrainState);
      const woken = new Promise((resolve) => drain.signal.addEventListener('abort', resolve, { once: true }));
      drain.begin(Date.now() + 10_000);
      await woken;
      expect(drain.isDraining).toBe(true);
      expect(drain.deadline).toBeGreaterThan(Date.now());

      const ready = await t.http.get('/ready').set('Connection', 'keep-alive').expect(503);
      expect(ready.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(ready.body).toMatchObject({ status: 503, code: 'service_unavailable', detail: 'The service is shutting down' });
      expect(ready.headers.connection).toBe('close');
      const created = await project.api.post('/api/v1/tasks', { title: 'While draining' }).set('Connection', 'keep-alive').expect(201);
      expect(created.headers.connection).toBe('close');
      expect(await t.prisma.task.count({ where: { id: created.body.task.id } })).toBe(1);
      expect((await t.http.get('/health').set('Connection', 'keep-alive').expect(200)).headers.connection).toBe('close');
    } finally {
      await t.close();
    }
  });
});

describe('readiness', () => {
  // Only a server database can be taken away from under a running service.
  (engine === 'postgresql' ? it : it.skip)('answers /ready 503 when the database is gone, and /health still 200 (PostgreSQL)', async () => {
    const t = await startTestApp();
    try {
      await t.http.get('/ready').expect(200);
      const url = new URL(t.config.databaseUrl!);
      const admin = new Client({ connectionString: process.env.TEST_POSTGRES_URL || 'postgresql://root@127.0.0.1:5432/test' });
      await admin.connect();
      await admin.query(`DROP DATABASE ${url.pathname.slice(1)} WITH (FORCE)`);
      await admin.end();
      const res = await t.http.get('/ready').expect(503);
      expect(res.body).toMatchObject({ code: 'service_unavailable' });
      expect(JSON.stringify(res.body)).not.toMatch(/database ".*" does not exist|ECONN|tasks_test/);
      await t.http.get('/health').expect(200);
    } finally {
      await t.close();
    }
  });
});
