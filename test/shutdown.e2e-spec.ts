import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProjectKey, ServerProcess, startServerProcess, stopServerProcess } from './support/server-process';
import { createTestDatabase, engine, TestDatabase } from './support/test-database';

interface Outcome {
  /** performance.now() just before the request was written. */
  sentAt: number;
  status?: number;
  taskId?: string;
  connectionClose?: boolean;
  /** The client-side error (ECONNRESET, ECONNREFUSED...) when no answer came. */
  error?: string;
}

/** POST /api/v1/tasks on a keep-alive agent of one connection, as a client library would. */
function createTask(agent: Agent, baseUrl: string, key: string, title: string): Promise<{ status: number; taskId?: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/api/v1/tasks`,
      { method: 'POST', agent, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const taskId = res.statusCode === 201 ? (JSON.parse(body) as { task: { id: string } }).task.id : undefined;
          resolve({ status: res.statusCode!, taskId, connection: res.headers.connection });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ title }));
  });
}

async function listAllTaskIds(baseUrl: string, key: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const url = `${baseUrl}/api/v1/tasks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { tasks: { id: string }[]; nextCursor: string | null };
    for (const task of page.tasks) ids.add(task.id);
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

describe('shutdown of the running service under load (a child process of the built server)', () => {
  let dataDir: string;
  let database: TestDatabase | null = null;
  let env: Record<string, string>;
  const started: ServerProcess[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'shutdown-'));
    if (engine === 'postgresql') database = await createTestDatabase();
    env = database ? { DATABASE_URL: database.url! } : { DATA_DIR: dataDir };
  });
  afterAll(async () => {
    for (const server of started) await stopServerProcess(server);
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('on SIGTERM answers every request sent before it, resets no connection, keeps every created task and exits 0', async () => {
    const server = await startServerProcess({ ...env, SHUTDOWN_TIMEOUT_MS: '10000' });
    started.push(server);
    const key = await createProjectKey(server.baseUrl);
    const outcomes: Outcome[] = [];
    const clients = Array.from({ length: 16 }, async (_, client) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let n = 0; ; n++) {
          const sentAt = performance.now();
          try {
            const res = await createTask(agent, server.baseUrl, key, `Client ${client} task ${n}`);
            outcomes.push({ sentAt, status: res.status, taskId: res.taskId, connectionClose: res.connection === 'close' });
            if (res.status !== 201) return;
          } catch (error) {
            outcomes.push({ sentAt, error: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
            return;
          }
        }
      } finally {
        agent.destroy();
      }
    });

    // SIGTERM in the middle of the load.
    while (outcomes.filter((outcome) => outcome.status === 201).length < 120) await sleep(5);
    const signalAt = performance.now();
    server.child.kill('SIGTERM');
    await Promise.all(clients);
    const code = await server.exited;
    const exitedAfterMs = performance.now() - signalAt;

    expect(code).toBe(0);
    expect(exitedAfterMs).toBeLessThan(10_000);
    const sentBefore = outcomes.filter((outcome) => outcome.sentAt < signalAt);
    expect(sentBefore.filter((outcome) => outcome.status !== 201)).toEqual([]);
    // The answers given while draining asked the clients to close their connections...
    expect(outcomes.some((outcome) => outcome.status === 201 && outcome.connectionClose)).toBe(true);
    // ...and every client stopped only when the server refused new connections.
    expect(outcomes.filter((outcome) => outcome.error).length).toBe(16);
    const log = server.logLines().map((line) => line.msg);
    expect(log).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^SIGTERM received: draining/),
        expect.stringMatching(/^HTTP server drained/),
        expect.stringMatching(/^Stopped in/),
      ]),
    );

    const restarted = await startServerProcess(env);
    started.push(restarted);
    try {
      const stored = await listAllTaskIds(restarted.baseUrl, key);
      const acknowledged = outcomes.filter((outcome) => outcome.status === 201).map((outcome) => outcome.taskId!);
      expect(acknowledged.length).toBeGreaterThanOrEqual(120);
      expect(acknowledged.filter((taskId) => !stored.has(taskId))).toEqual([]);
    } finally {
      restarted.child.kill('SIGTERM');
      expect(await restarted.exited).toBe(0);
    }
    // Two starts of the server on a new database and a load run: minutes on a busy machine.
  }, 240_000);
});
