import { Client } from 'pg';
import { createProjectKey, ServerProcess, startServerProcess, stopServerProcess } from './support/server-process';
import { createTestDatabase, engine, TestDatabase } from './support/test-database';

const ADMIN_URL = process.env.TEST_POSTGRES_URL || 'postgresql://root@127.0.0.1:5432/test';

/** Runs statements on the PostgreSQL server as its administrator (another database than the service's). */
async function asServerAdmin(...statements: string[]): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

// Only a server database can go away under a running service; the embedded one lives in its process.
(engine === 'postgresql' ? describe : describe.skip)('database outage on PostgreSQL (a child process of the built server)', () => {
  let database: TestDatabase;
  let name: string;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    name = new URL(database.url!).pathname.slice(1);
    server = await startServerProcess({ DATABASE_URL: database.url! });
    key = await createProjectKey(server.baseUrl);
  }, 120_000);
  afterAll(async () => {
    await stopServerProcess(server);
    await asServerAdmin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await database.drop();
  });

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.baseUrl}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
    });
  const createTask = (title: string) => api('/api/v1/tasks', { method: 'POST', body: JSON.stringify({ title }) });

  it('answers 503 database_unavailable with Retry-After while the database is away, and recovers by itself when it is back', async () => {
    // Several connections open in the pool, all of which the outage will kill.
    const before = await Promise.all(Array.from({ length: 8 }, (_, i) => createTask(`Before ${i}`)));
    expect(before.map((res) => res.status)).toEqual(Array(8).fill(201));

    // The database goes away: every backend of the service is terminated and no new connection is accepted.
    await asServerAdmin(
      `ALTER DATABASE ${name} ALLOW_CONNECTIONS false`,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`,
    );
    const during = [
      await createTask('During'),
      await api('/api/v1/tasks'),
      await api('/api/v1/sprints', { method: 'POST', body: JSON.stringify({ name: 'During' }) }),
      ...(await Promise.all(Array.from({ length: 6 }, (_, i) => createTask(`During ${i}`)))),
    ];
    for (const res of during) {
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('retry-after')).toBe('5');
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 503, code: 'database_unavailable' });
      expect(JSON.stringify(body)).not.toMatch(/terminat|accepting|ECONN|P1\d\d\d|57P0|tasks_test/);
    }
    const ready = await fetch(`${server.baseUrl}/ready`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { code: string }).code).toBe('service_unavailable');
    expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);

    // The database is back: the very next requests succeed, with no restart.
    await asServerAdmin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    expect((await fetch(`${server.baseUrl}/ready`)).status).toBe(200);
    const after = await Promise.all(Array.from({ length: 8 }, (_, i) => createTask(`After ${i}`)));
    expect(after.map((res) => res.status)).toEqual(Array(8).fill(201));
    const list = (await (await api('/api/v1/tasks?limit=100')).json()) as { total: number };
    expect(list.total).toBe(16);

    // Nothing crashed: the same process served throughout, and logged each refusal as a warning with its cause.
    expect(server.child.exitCode).toBeNull();
    const refusals = server.logLines().filter((line) => line.status === 503 && line.route === '/api/v1/tasks');
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.every((line) => line.level === 'warn' && typeof line.cause === 'string')).toBe(true);
    expect(server.logLines().filter((line) => line.level === 'error' || line.level === 'fatal')).toEqual([]);
  });

  it('answers 503 database_unavailable, never 500, when connections are terminated under requests in flight', async () => {
    const statuses: number[] = [];
    let loading = true;
    const clients = Array.from({ length: 8 }, async (_, client) => {
      for (let n = 0; loading; n++) {
        const res = await createTask(`Load ${client}-${n}`);
        statuses.push(res.status);
        if (res.status !== 201) expect(((await res.json()) as { code: string }).code).toBe('database_unavailable');
      }
    });
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await asServerAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
    }
    loading = false;
    await Promise.all(clients);
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);
    // Recovered: the pool replaced every terminated connection.
    const after = await Promise.all(Array.from({ length: 8 }, (_, i) => createTask(`After terminate ${i}`)));
    expect(after.map((res) => res.status)).toEqual(Array(8).fill(201));
    expect(server.child.exitCode).toBeNull();
  });
});
