import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { openEventStream, StreamClient } from './support/event-stream';
import { createProjectKey, ServerProcess, startServerProcess, stopServerProcess } from './support/server-process';
import { createTestDatabase, engine, TestDatabase } from './support/test-database';

const SHUTDOWN_TIMEOUT_MS = 10_000;

/** POST /api/v1/tasks on a keep-alive agent of one connection. */
function createTask(agent: Agent, baseUrl: string, key: string, title: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/api/v1/tasks`,
      { method: 'POST', agent, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ title }));
  });
}

describe('shutdown with open event streams (a child process of the built server)', () => {
  let dataDir: string;
  let database: TestDatabase | null = null;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'stream-shutdown-'));
    if (engine === 'postgresql') database = await createTestDatabase();
  });
  afterAll(async () => {
    await stopServerProcess(server);
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('ends every stream cleanly at once on SIGTERM, answers every request sent before it, resets none, and exits 0 well within SHUTDOWN_TIMEOUT_MS', async () => {
    server = await startServerProcess({
      ...(database ? { DATABASE_URL: database.url! } : { DATA_DIR: dataDir }),
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    });
    const key = await createProjectKey(server.baseUrl);
    const streams: StreamClient[] = [];
    for (let i = 0; i < 5; i++) streams.push(await openEventStream(server.baseUrl, key, { query: 'after=0' }));
    expect(streams.map((stream) => stream.status)).toEqual(Array(5).fill(200));

    const outcomes: { sentAt: number; status?: number; error?: string }[] = [];
    const writers = Array.from({ length: 8 }, async (_, writer) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let n = 0; ; n++) {
          const sentAt = performance.now();
          try {
            const status = await createTask(agent, server!.baseUrl, key, `Writer ${writer} task ${n}`);
            outcomes.push({ sentAt, status });
            if (status !== 201) return;
          } catch (error) {
            outcomes.push({ sentAt, error: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
            return;
          }
        }
      } finally {
        agent.destroy();
      }
    });
    while (outcomes.filter((outcome) => outcome.status === 201).length < 40) await sleep(5);
    const signalAt = performance.now();
    server.child.kill('SIGTERM');
    const streamsEnded = await Promise.all(streams.map(async (stream) => [await stream.finished, performance.now() - signalAt] as const));
    await Promise.all(writers);
    const code = await server.exited;
    const exitedAfterMs = performance.now() - signalAt;

    expect(code).toBe(0);
    // The drain did not wait for the streams: they ended at once, each answer complete.
    expect(streamsEnded.map(([how]) => how)).toEqual(Array(5).fill('end'));
    expect(Math.max(...streamsEnded.map(([, ms]) => ms))).toBeLessThan(SHUTDOWN_TIMEOUT_MS / 4);
    expect(exitedAfterMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    const log = server.logLines().map((line) => line.msg);
    expect(log).toEqual(expect.arrayContaining([expect.stringMatching(/^HTTP server drained/)]));
    expect(log.filter((msg) => /still running at the drain deadline/.test(String(msg)))).toEqual([]);
    // Every request sent before the signal was answered, none reset.
    expect(outcomes.filter((outcome) => outcome.sentAt < signalAt && outcome.status !== 201)).toEqual([]);
    // Each stream sent the events in order, with no gap, up to where it ended.
    for (const stream of streams) {
      const ids = stream.events.map((event) => Number(event.id));
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, index) => index + 1));
    }
  }, 240_000);
});
