import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { ConfigError, loadConfig } from '../src/config/app-config';
import { createProject, createTask } from './support/fixtures';
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
  ])('stops the start with a message naming the variable for %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('graceful shutdown', () => {
  it('finishes the requests in flight, then stops accepting connections', async () => {
    const t = await startTestApp();
    const project = await createProject(t);
    for (let i = 0; i < 30; i++) await createTask(project, { title: `Task ${i}` });
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const url = `http://127.0.0.1:${port}/api/v1/tasks?limit=100`;
    let keyLookups = 0;
    (t.prisma as unknown as { $on(event: 'query', listener: (event: { query: string }) => void): void }).$on('query', (event) => {
      if (/\bapi_keys\b/.test(event.query)) keyLookups++;
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
