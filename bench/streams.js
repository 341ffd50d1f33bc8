'use strict';
// npm run bench:streams [-- --streams=100 --changes=1000 --idle=1000 --writers=16]
//
// The event stream (GET /api/v1/events/stream, issue 27) under a crowd:
// 1. A database of its own (tasks_bench_<random> on the server of DATABASE_URL, or a temporary
//    PGlite directory) and the service on it (node dist/main.js, its own process); a project
//    and enough keys for the streams (a key holds at most 10), made through the admin interface.
// 2. Idle memory: the service's resident memory (VmRSS of its process) before and after
//    `--idle` streams are opened and left idle for a few seconds (then closed).
// 3. Delivery: `--streams` streams open, then a burst of `--changes` task creates from
//    `--writers` keep-alive connections. For each event, the delay from its commit (its
//    occurredAt, taken by the database under the project's event lock just before the commit)
//    to its arrival on the last of the streams; p50, p99 and the largest. Every stream must
//    get every event, once and in order. Target (PostgreSQL): p99 < 200 ms.
// The numbers of a run belong in bench/results/ (the lead's runs), not in the README.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { randomBytes } = require('node:crypto');
const { startServer, stopAll, sleep } = require('./processes');
const { createBenchDatabase } = require('./databases');

const ROOT = path.resolve(__dirname, '..');
const ADMIN_TOKEN = randomBytes(16).toString('hex');
const STREAMS_PER_KEY = 10;

function option(name, fallback) {
  const arg = process.argv.find((candidate) => candidate.startsWith(`--${name}=`));
  return arg ? Number(arg.split('=')[1]) : fallback;
}

async function call(url, method, token, body) {
  const res = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** A project and `count` keys of it. */
async function projectWithKeys(baseUrl, count) {
  const { project } = await call(`${baseUrl}/admin/v1/projects`, 'POST', ADMIN_TOKEN, { name: 'Stream bench' });
  const keys = [];
  for (let i = 0; i < count; i++) {
    const issued = await call(`${baseUrl}/admin/v1/projects/${project.id}/keys`, 'POST', ADMIN_TOKEN, {
      name: `Reader ${i}`,
      permissions: ['tasks:create'],
    });
    keys.push(issued.secret);
  }
  return keys;
}

/**
 * Opens a stream; `onEvent(id, data, receivedAt)` for each event (data parsed only when
 * `parse`). Resolves once the answer's headers have come.
 */
function openStream(baseUrl, key, { parse = false, onEvent = () => undefined } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}/api/v1/events/stream`, { headers: { Authorization: `Bearer ${key}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`the stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let pending = '';
      res.on('data', (chunk) => {
        const receivedAt = Date.now();
        pending += chunk;
        let end;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const message = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (!message.startsWith('id: ')) continue;
          const id = Number(message.slice(4, message.indexOf('\n')));
          const data = parse ? JSON.parse(message.slice(message.indexOf('\ndata: ') + 7)) : null;
          onEvent(id, data, receivedAt);
        }
      });
      res.on('error', () => undefined);
      resolve({ close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function rssKb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

async function measureDelivery(baseUrl, keys, { streams, changes, writers }) {
  const occurredAt = new Map();
  const lastArrival = new Map();
  const counts = Array(streams).fill(0);
  const inOrder = Array(streams).fill(true);
  const last = Array(streams).fill(0);
  const open = [];
  for (let i = 0; i < streams; i++) {
    open.push(
      await openStream(baseUrl, keys[Math.floor(i / STREAMS_PER_KEY)], {
        parse: i === 0,
        onEvent: (id, data, receivedAt) => {
          if (data) occurredAt.set(id, Date.parse(data.occurredAt));
          if (id !== last[i] + 1 && last[i] !== 0) inOrder[i] = false;
          last[i] = id;
          counts[i]++;
          lastArrival.set(id, Math.max(lastArrival.get(id) ?? 0, receivedAt));
        },
      }),
    );
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: writers });
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < changes) {
        const n = next++;
        await new Promise((resolve, reject) => {
          const req = http.request(
            `${baseUrl}/api/v1/tasks`,
            { method: 'POST', agent, headers: { Authorization: `Bearer ${keys[0]}`, 'Content-Type': 'application/json' } },
            (res) => {
              res.resume();
              res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`a create answered ${res.statusCode}`))));
            },
          );
          req.on('error', reject);
          req.end(JSON.stringify({ title: `Burst ${n}` }));
        });
      }
    }),
  );
  const written = Date.now() - started;
  for (let waited = 0; counts.some((count) => count < changes) && waited < 60_000; waited += 50) await sleep(50);
  for (const stream of open) stream.close();
  agent.destroy();
  const delays = [...lastArrival.entries()].map(([id, at]) => at - occurredAt.get(id)).sort((a, b) => a - b);
  return {
    written,
    complete: counts.every((count) => count === changes),
    inOrder: inOrder.every(Boolean),
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    max: delays[delays.length - 1],
  };
}

async function measureIdleMemory(baseUrl, keys, pid, idle) {
  const before = rssKb(pid);
  const open = [];
  for (let i = 0; i < idle; i++) open.push(await openStream(baseUrl, keys[Math.floor(i / STREAMS_PER_KEY)]));
  await sleep(3000);
  const after = rssKb(pid);
  for (const stream of open) stream.close();
  // The service frees the keys' stream slots as it sees the connections close.
  await sleep(1000);
  return { before, after, perStream: ((after - before) * 1024) / idle };
}

async function main() {
  const streams = option('streams', 100);
  const changes = option('changes', 1000);
  const idle = option('idle', 1000);
  const writers = option('writers', 16);
  if (!fs.existsSync(path.join(ROOT, 'dist/main.js'))) throw new Error('Build first: npm run build');
  const database = await createBenchDatabase(process.env.DATABASE_URL);
  try {
    const env = { ...database.env, ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE: '10000000', LOG_LEVEL: 'warn' };
    const service = await startServer('service', ['dist/main.js'], env);
    const keys = await projectWithKeys(service.url, Math.ceil(Math.max(streams, idle) / STREAMS_PER_KEY));
    // Memory first, on a service that has not yet allocated for a burst.
    await sleep(2000);
    const memory = await measureIdleMemory(service.url, keys, service.pid, idle);
    const delivery = await measureDelivery(service.url, keys, { streams, changes, writers });
    await service.stop();
    console.log(
      [
        `engine: ${database.engine}, ${os.cpus().length} CPUs, Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`,
        `${streams} streams, a burst of ${changes} creates from ${writers} connections (written in ${delivery.written} ms): ` +
          `every event on every stream, in order: ${delivery.complete && delivery.inOrder ? 'yes' : 'NO'}`,
        `delay from commit to the last stream: p50 ${delivery.p50} ms, p99 ${delivery.p99} ms, max ${delivery.max} ms` +
          (database.engine === 'postgresql' ? ` (target p99 < 200 ms: ${delivery.p99 < 200 ? 'met' : 'missed'})` : ''),
        `${idle} idle streams: service RSS ${(memory.before / 1024).toFixed(0)} MiB -> ${(memory.after / 1024).toFixed(0)} MiB, ` +
          `about ${(memory.perStream / 1024).toFixed(1)} KiB a stream`,
      ].join('\n'),
    );
  } finally {
    await stopAll();
    await database.drop();
  }
}

process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
main().catch(async (error) => {
  console.error(error);
  await stopAll();
  process.exit(1);
});
