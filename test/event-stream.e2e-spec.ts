import { EventSource } from 'eventsource';
import Redis from 'ioredis';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChangeSignal } from '../src/events/change-signal.service';
import { EventRetention } from '../src/events/event-retention.service';
import { setOf } from '../src/events/stream-slots';
import { openEventStream, StreamClient } from './support/event-stream';
import { asAdmin, createProject, createTask, TestProject } from './support/fixtures';
import { engine, startTestApp, TestApp } from './support/test-app';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type EventJson = { id: string; sequence: number; type: string; data: Record<string, any> };

/** The events of createProject's set-up: 2 member.created, then 3 label.created. */
const S = 5;
const KEEP_ALIVE_MS = 300;
const MAX_UNREAD_BYTES = 256 * 1024;

describe('the event stream (GET /api/v1/events/stream)', () => {
  let t: TestApp;
  let baseUrl: string;
  const open: StreamClient[] = [];
  beforeAll(async () => {
    t = await startTestApp({ eventStreamKeepAliveMs: KEEP_ALIVE_MS, eventStreamMaxUnreadBytes: MAX_UNREAD_BYTES });
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(() => t.close());

  const stream = async (project: TestProject | string, options: Parameters<typeof openEventStream>[2] = {}) => {
    const client = await openEventStream(baseUrl, typeof project === 'string' ? project : project.key, options);
    open.push(client);
    return client;
  };
  const feed = async (project: TestProject, after = 0): Promise<EventJson[]> =>
    (await project.api.get(`/api/v1/events?after=${after}&limit=1000`).expect(200)).body.events;
  const parsed = (client: StreamClient) => client.events.map((message) => JSON.parse(message.data) as EventJson);

  it('sends retry: 2000 first, then each event as id, event and data (the feed event, on one line), with the headers of a stream', async () => {
    const project = await createProject(t, 'Stream framing');
    await createTask(project, { title: 'Before', labelIds: [project.labels[0].id] });
    const client = await stream(project, { query: 'after=0' });
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toBe('text/event-stream');
    expect(client.headers['cache-control']).toBe('private, no-cache');
    expect(client.headers['x-accel-buffering']).toBe('no');
    await client.waitForEvents(S + 1);
    expect(client.retry).toBe(2000);
    const [retry, ...messages] = client.raw().split('\n\n');
    expect(retry).toBe('retry: 2000');
    expect(messages.pop()).toBe('');
    const events = await feed(project);
    expect(messages.map((message) => /^id: (\d+)\nevent: ([a-z._]+)\ndata: ([^\n]+)$/.exec(message)?.slice(1))).toEqual(
      events.map((event) => [String(event.sequence), event.type, expect.any(String)]),
    );
    expect(parsed(client)).toEqual(events);
  });

  it('starts at the current end without after or Last-Event-ID, and sends each new event within about 100 ms of its commit', async () => {
    const project = await createProject(t, 'Stream live');
    const client = await stream(project);
    const delays = [];
    for (let i = 0; i < 5; i++) {
      const task = await createTask(project, { title: `Live ${i}` });
      const committed = Date.now();
      const [message] = (await client.waitForEvents(i + 1)).slice(i);
      delays.push(Date.now() - committed);
      expect(message).toMatchObject({ id: String(S + 1 + i), event: 'task.created' });
      expect(JSON.parse(message.data).data.task).toEqual(task);
    }
    // About 100 ms is the promise; a busy test machine gets some slack.
    expect(Math.min(...delays)).toBeLessThan(250);
    expect(client.events).toHaveLength(5);
  });

  it('resumes after a dropped connection with Last-Event-ID: exactly the events after it, none twice (Last-Event-ID wins over after)', async () => {
    const project = await createProject(t, 'Stream resume');
    const first = await stream(project, { query: 'after=0' });
    await first.waitForEvents(S);
    for (let i = 0; i < 3; i++) await createTask(project, { title: `Seen ${i}` });
    await first.waitForEvents(S + 3);
    first.close();
    const lastSeen = first.events.at(-1)!.id!;
    expect(lastSeen).toBe(String(S + 3));
    for (let i = 0; i < 4; i++) await createTask(project, { title: `Missed ${i}` });

    const resumed = await stream(project, { query: 'after=0', lastEventId: lastSeen });
    await resumed.waitForEvents(4);
    await createTask(project, { title: 'Live again' });
    await resumed.waitForEvents(5);
    await sleep(300);
    expect(resumed.events.map((message) => Number(message.id))).toEqual([S + 4, S + 5, S + 6, S + 7, S + 8]);
    const all = [...first.events, ...resumed.events].map((message) => JSON.parse(message.data) as EventJson);
    expect(all).toEqual(await feed(project));
  });

  it('resumes an EventSource (the eventsource package) with Last-Event-ID after the server drops its connection', async () => {
    const project = await createProject(t, 'Stream EventSource');
    const received: MessageEvent[] = [];
    let opened = 0;
    const source = new EventSource(`${baseUrl}/api/v1/events/stream?after=0`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, Authorization: `Bearer ${project.key}` } }),
    });
    source.onopen = () => opened++;
    for (const type of ['member.created', 'label.created', 'task.created']) source.addEventListener(type, (event) => received.push(event));
    try {
      const until = async (check: () => boolean) => {
        for (let waited = 0; !check(); waited += 50) {
          if (waited > 10_000) throw new Error(`waited in vain; received ${received.map((event) => event.lastEventId).join(',')}`);
          await sleep(50);
        }
      };
      await createTask(project, { title: 'Before the drop' });
      await until(() => received.length === S + 1);
      // Every connection of the server closed at once: the stream's too, as a network failure would.
      t.app.getHttpServer().closeAllConnections();
      await createTask(project, { title: 'While it was away' });
      await until(() => opened === 2 && received.length === S + 2);
      await createTask(project, { title: 'After it came back' });
      await until(() => received.length === S + 3);
      expect(received.map((event) => Number(event.lastEventId))).toEqual(Array.from({ length: S + 3 }, (_, index) => index + 1));
      expect(received.map((event) => JSON.parse(event.data as string))).toEqual(await feed(project));
    } finally {
      source.close();
    }
  });

  it('filters by types', async () => {
    const project = await createProject(t, 'Stream types');
    const client = await stream(project, { query: 'after=0&types=label.created,task.updated' });
    const task = await createTask(project);
    await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Renamed' }).expect(200);
    await client.waitForEvents(4);
    await sleep(200);
    expect(client.events.map((message) => [message.event, Number(message.id)])).toEqual([
      ['label.created', 3],
      ['label.created', 4],
      ['label.created', 5],
      ['task.updated', S + 2],
    ]);
    // Resuming from the last event sent skips what the filter left out after it, as before.
    const resumed = await stream(project, { query: 'types=task.created', lastEventId: '3' });
    await resumed.waitForEvents(1);
    expect(parsed(resumed).map((event) => event.data.task.id)).toEqual([task.id]);
  });

  it('sends a keep-alive comment every EVENT_STREAM_KEEP_ALIVE_MS (15 s by default)', async () => {
    const project = await createProject(t, 'Stream keep-alive');
    const client = await stream(project);
    await sleep(KEEP_ALIVE_MS * 4 + 150);
    expect(client.comments.length).toBeGreaterThanOrEqual(3);
    expect(new Set(client.comments)).toEqual(new Set(['keep-alive']));
    expect(client.raw()).toContain('\n\n: keep-alive\n\n');
    const { loadConfig } = await import('../src/config/app-config');
    expect(loadConfig({}).eventStreamKeepAliveMs).toBe(15_000);
  });

  it('lets a key hold 10 streams at once: the 11th is 429 rate_limited before it starts; other keys and a closed slot are free', async () => {
    const project = await createProject(t, 'Stream limit');
    const streams = [];
    for (let i = 0; i < 10; i++) streams.push(await stream(project));
    expect(streams.map((client) => client.status)).toEqual(Array(10).fill(200));
    const refused = await stream(project);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.headers['retry-after']).toBe('2');
    expect(JSON.parse(refused.raw())).toMatchObject({ status: 429, code: 'rate_limited' });

    const other = await project.issueKey([], 'Another key');
    expect((await stream(other.secret)).status).toBe(200);
    streams[0].close();
    await streams[0].finished;
    let again = await stream(project);
    for (let tries = 0; again.status === 429 && tries < 20; tries++) {
      await sleep(50);
      again = await stream(project);
    }
    expect(again.status).toBe(200);
  });

  it('refuses before it starts: after or Last-Event-ID beyond the end (400 with lastSequence), a Last-Event-ID that is no sequence, an unknown type', async () => {
    const project = await createProject(t, 'Stream refusals');
    const cases: [Parameters<typeof openEventStream>[2], string][] = [
      [{ query: `after=${S + 1}` }, 'after'],
      [{ lastEventId: String(S + 1) }, 'Last-Event-ID'],
      [{ lastEventId: 'abc' }, 'Last-Event-ID'],
      [{ query: 'after=-1' }, 'after'],
      [{ query: 'types=task.exploded' }, 'types'],
    ];
    for (const [options, field] of cases) {
      const client = await stream(project, options);
      expect([client.status, client.headers['content-type']]).toEqual([400, expect.stringMatching(/^application\/problem\+json/)]);
      expect(JSON.parse(client.raw())).toMatchObject({ code: 'validation_failed', errors: [{ field }] });
    }
    const beyond = JSON.parse((await stream(project, { query: `after=${S + 1}` })).raw());
    expect(beyond.lastSequence).toBe(S);
    expect((await stream(project, { query: 'wait=1' })).status).toBe(400);
  });

  it('answers HEAD with the headers of a stream and no body', async () => {
    const project = await createProject(t, 'Stream head');
    const client = await stream(project, { method: 'HEAD' });
    expect([client.status, client.headers['content-type']]).toEqual([200, 'text/event-stream']);
    expect(await client.finished).toBe('end');
  });

  it('holds no database connection while idle: 20 open streams leave the pool free', async () => {
    const project = await createProject(t, 'Stream idle');
    const other = await project.issueKey([], 'Second key');
    for (let i = 0; i < 10; i++) await stream(project);
    for (let i = 0; i < 10; i++) await stream(other.secret);
    await sleep(300);
    const pool = t.prisma.engine.poolStats();
    if (pool) expect(pool.total - pool.idle).toBe(0);
    // And the service answers at once meanwhile.
    const started = Date.now();
    await project.api.get('/api/v1/tasks').expect(200);
    expect(Date.now() - started).toBeLessThan(1000);
    const task = await createTask(project);
    for (const client of open.slice(-20)) {
      await client.waitForEvents(1);
      expect(parsed(client)[0].data.task.id).toBe(task.id);
    }
  });

  const openStreams = async () => Number(/^event_streams_open (\d+)$/m.exec((await t.http.get('/metrics').expect(200)).text)![1]);
  const settled = async (check: () => Promise<boolean> | boolean, what: string) => {
    for (let waited = 0; !(await check()); waited += 50) {
      if (waited > 10_000) throw new Error(`still not so after 10 s: ${what}`);
      await sleep(50);
    }
  };

  /** 1 200 tasks of 10 000 characters each: about 12 MB of events, more than the kernel's socket buffers hold. */
  const createBigTasks = async (project: TestProject) => {
    const description = 'x'.repeat(10_000);
    for (let i = 0; i < 12; i++) {
      const tasks = Array.from({ length: 100 }, (_, n) => ({ title: `Big ${i}.${n}`, description }));
      await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(201);
    }
  };

  it('cuts off a client that stops reading once MAX_UNREAD_BYTES wait for it, destroying its connection rather than holding the buffer', async () => {
    const project = await createProject(t, 'Stream slow reader');
    const closed = new Promise<number>((resolve, reject) => {
      const req = request(`${baseUrl}/api/v1/events/stream`, { headers: { Authorization: `Bearer ${project.key}` } });
      req.on('error', () => undefined);
      req.on('response', (res) => {
        // Never reads: what the server writes piles up in the kernel's buffers, then in the server's.
        res.pause();
        res.on('error', () => undefined);
        req.socket!.once('close', () => resolve(Date.now()));
      });
      req.once('error', reject);
      req.end();
    });
    await settled(async () => (await openStreams()) >= 1, 'the stream is open');
    await createBigTasks(project);
    const wroteAt = Date.now();
    expect(await closed).toBeLessThan(wroteAt + 5_000);
    await settled(async () => (await openStreams()) === 0, 'no stream open');
  });

  it('ends the stream of a client that stops reading while it catches up, within two keep-alive intervals, freeing its slot', async () => {
    const project = await createProject(t, 'Stream stalled catch-up');
    await createBigTasks(project);
    // The catch-up sends one event at a time as the client reads, so MAX_UNREAD_BYTES never piles up: only the stall rule
    // ends it. Seen from the server (its open streams): the client's kernel still holds unread bytes, so its socket's
    // close reaches it only if it ever reads.
    const req = request(`${baseUrl}/api/v1/events/stream?after=0`, { headers: { Authorization: `Bearer ${project.key}` } });
    req.on('error', () => undefined);
    req.on('response', (res) => (res.pause(), res.on('error', () => undefined)));
    req.end();
    await settled(async () => (await openStreams()) >= 1, 'the stream is open');
    const openedAt = Date.now();
    await settled(async () => (await openStreams()) === 0, 'the stalled stream ended');
    expect(Date.now() - openedAt).toBeLessThan(KEEP_ALIVE_MS * 3 + 3_000);
    req.destroy();
  });

  it('leaves no listener behind: after many streams opened and closed, the project has no change waiter and no stream open', async () => {
    const project = await createProject(t, 'Stream cycles');
    const signal = t.app.get(ChangeSignal);
    for (let round = 0; round < 5; round++) {
      const clients = [];
      for (let i = 0; i < 8; i++) clients.push(await stream(project, { query: 'after=0', method: i === 7 ? 'HEAD' : 'GET' }));
      await createTask(project, { title: `Round ${round}` });
      for (const client of clients.slice(0, 7)) await client.waitForEvents(S + 1 + round);
      expect(signal.waitersOf(project.id)).toBeGreaterThan(0);
      for (const client of clients) client.close();
      // A long poll that ends at its deadline, and one woken by a change.
      await project.api.get(`/api/v1/events?after=${S + 1 + round}&wait=1`).expect(200);
    }
    await settled(() => signal.waitersOf(project.id) === 0, 'no change waiter for the project');
    await settled(async () => (await openStreams()) === 0, 'no stream open');
  });

  it('ends the streams of a revoked key within a keep-alive interval, and its reconnect is 401; other keys stream on', async () => {
    const project = await createProject(t, 'Stream revoked');
    const other = await project.issueKey([], 'Kept key');
    const revokedKey = await project.issueKey([], 'Revoked key');
    const revoked = [await stream(revokedKey.secret), await stream(revokedKey.secret)];
    const kept = await stream(other.secret);
    await asAdmin(t).delete(`/admin/v1/keys/${revokedKey.id}`).expect(204);
    const revokedAt = Date.now();
    expect(await Promise.all(revoked.map((client) => client.finished))).toEqual(['end', 'end']);
    expect(Date.now() - revokedAt).toBeLessThan(KEEP_ALIVE_MS * 2 + 1_000);
    expect((await stream(revokedKey.secret, { lastEventId: String(S) })).status).toBe(401);
    await createTask(project, { title: 'Still followed' });
    await kept.waitForEvents(1);
  });

  it('is counted in http_requests_total but kept out of http_request_duration_seconds: a stream open for minutes is no slow request', async () => {
    const project = await createProject(t, 'Stream metrics');
    const key = await project.issueKey([], 'Metrics key');
    const sample = async (name: string) => {
      const line = new RegExp(`^${name}\\{method="GET",route="/api/v1/events/stream",status="200"\\} (\\d+)$`, 'm');
      return Number(line.exec((await t.http.get('/metrics').expect(200)).text)?.[1] ?? 0);
    };
    const [counted, timed] = [await sample('http_requests_total'), await sample('http_request_duration_seconds_count')];
    const client = await stream(key.secret);
    await sleep(500);
    // Ended by the server (the key's revocation), so that the answer finishes.
    await asAdmin(t).delete(`/admin/v1/keys/${key.id}`).expect(204);
    expect(await client.finished).toBe('end');
    await settled(async () => (await sample('http_requests_total')) === counted + 1, 'the stream counted');
    expect(await sample('http_request_duration_seconds_count')).toBe(timed);
  });

  (engine === 'postgresql' ? it : it.skip)('ends the streams of a key revoked through another instance (PostgreSQL)', async () => {
    const project = await createProject(t, 'Stream revoked elsewhere');
    const revokedKey = await project.issueKey([], 'Revoked elsewhere');
    const client = await stream(revokedKey.secret);
    const second = await startTestApp({}, { url: t.config.databaseUrl, alter: async () => undefined, drop: async () => undefined });
    try {
      await asAdmin(second).delete(`/admin/v1/keys/${revokedKey.id}`).expect(204);
      const revokedAt = Date.now();
      expect(await client.finished).toBe('end');
      expect(Date.now() - revokedAt).toBeLessThan(KEEP_ALIVE_MS * 2 + 1_000);
    } finally {
      await second.close();
    }
  });

  (engine === 'postgresql' ? it : it.skip)(
    'counts the 10 streams of a key across instances with REDIS_URL; a lease its instance stopped renewing no longer counts (PostgreSQL)',
    async () => {
      const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
      const project = await createProject(t, 'Stream slots shared');
      const shared = { url: t.config.databaseUrl, alter: async () => undefined, drop: async () => undefined };
      const instances = [
        await startTestApp({ redisUrl, eventStreamKeepAliveMs: KEEP_ALIVE_MS }, shared),
        await startTestApp({ redisUrl, eventStreamKeepAliveMs: KEEP_ALIVE_MS }, shared),
      ];
      const redis = new Redis(redisUrl);
      try {
        const urls = [];
        for (const instance of instances) {
          await instance.app.listen(0, '127.0.0.1');
          urls.push(`http://127.0.0.1:${(instance.app.getHttpServer().address() as AddressInfo).port}`);
        }
        const keyId = (await asAdmin(t).get(`/admin/v1/projects/${project.id}/keys`).expect(200)).body.keys[0].id;
        // A lease left by an instance that died: expired, it is dropped instead of counted.
        await redis.zadd(setOf(keyId), Date.now() - 1, 'dead-instance');
        const clients = [];
        for (let i = 0; i < 10; i++) clients.push(await openEventStream(urls[i % 2], project.key));
        open.push(...clients);
        expect(clients.map((client) => client.status)).toEqual(Array(10).fill(200));
        // Leases outlive a few renewals (3 keep-alive intervals each).
        await sleep(KEEP_ALIVE_MS * 4);
        for (const url of urls) {
          const refused = await openEventStream(url, project.key);
          open.push(refused);
          expect(refused.status).toBe(429);
        }
        clients[0].close();
        await clients[0].finished;
        let again = await openEventStream(urls[1], project.key);
        for (let tries = 0; again.status === 429 && tries < 20; tries++) {
          await sleep(50);
          again = await openEventStream(urls[1], project.key);
        }
        open.push(again);
        expect(again.status).toBe(200);
      } finally {
        for (const client of open.splice(0)) client.close();
        redis.disconnect();
        for (const instance of instances) await instance.close();
      }
    },
  );

  (engine === 'postgresql' ? it : it.skip)('gets a change written through another instance on the same database (PostgreSQL)', async () => {
    const project = await createProject(t, 'Stream two instances');
    const second = await startTestApp({}, { url: t.config.databaseUrl, alter: async () => undefined, drop: async () => undefined });
    try {
      const client = await stream(project);
      const created = await second.http.post('/api/v1/tasks').set('Authorization', `Bearer ${project.key}`).send({ title: 'Elsewhere' }).expect(201);
      const committed = Date.now();
      const [message] = await client.waitForEvents(1);
      expect(Date.now() - committed).toBeLessThan(500);
      expect(JSON.parse(message.data).data.task.id).toBe(created.body.task.id);
    } finally {
      await second.close();
    }
  });

  // Last: pruning with a clock days ahead removes the events of every project of the database.
  it('answers 410 events_expired before it starts for a position older than what EVENT_RETENTION_DAYS kept', async () => {
    const project = await createProject(t, 'Stream expired');
    await createTask(project);
    const retention = new EventRetention(t.prisma, { ...t.config, eventRetentionDays: 1 });
    expect(await retention.prune(new Date(Date.now() + 3 * 24 * 60 * 60 * 1000))).toBeGreaterThan(0);
    for (const options of [{ query: 'after=2' }, { lastEventId: '0' }]) {
      const client = await stream(project, options);
      expect(client.status).toBe(410);
      expect(JSON.parse(client.raw()).code).toBe('events_expired');
    }
    // From the end it still starts.
    expect((await stream(project, { query: `after=${S + 1}` })).status).toBe(200);
  });
});
