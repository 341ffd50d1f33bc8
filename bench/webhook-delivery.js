'use strict';
// npm run bench:webhooks [-- --events=5000]
//
// How fast the webhook worker drains its queue to a local receiver that answers 200 at once
// (issue 14: at least 200 events/s on PostgreSQL).
//
// 1. A database of its own (tasks_bench_<random> on the server of DATABASE_URL, or a temporary
//    PGlite directory), the service started on it (node dist/main.js, its own process), a
//    project, a key and one webhook subscribed to everything, made through the API.
// 2. The service stopped; N task.created events and their N deliveries queued straight into
//    the tables (one INSERT ... SELECT each), as a backlog left by a crash or an outage.
// 3. The service started again: its worker finds the backlog at once. The receiver, in this
//    process, counts the requests; the rate is (N - 1) / (time of the last - time of the first).
// 4. Every delivery must be `succeeded` with one attempt; then the database is dropped.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { startServer, stopAll } = require('./processes');

const { fetch } = globalThis;

const ROOT = path.resolve(__dirname, '..');
const ADMIN_TOKEN = randomBytes(16).toString('hex');

async function main() {
  const events = Number(process.argv.find((arg) => arg.startsWith('--events='))?.split('=')[1] ?? 5000);
  if (!fs.existsSync(path.join(ROOT, 'dist/main.js'))) throw new Error('Build first: npm run build');
  const database = await createDatabase(process.env.DATABASE_URL);
  const receiver = await startReceiver();
  try {
    const env = { ...database.env, ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '1000000' };
    let service = await startServer('service', ['dist/main.js'], env);
    const { projectId, webhookId } = await subscribe(service.url, receiver.url);
    await service.stop();

    await database.run(queueBacklog(projectId, webhookId, events));
    console.log(`Queued ${events} deliveries on ${database.engine}; starting the service again.`);
    service = await startServer('service', ['dist/main.js'], env);
    const deadline = Date.now() + 5 * 60_000;
    while (receiver.times.length < events && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await service.stop();
    if (receiver.times.length < events) throw new Error(`Only ${receiver.times.length} of ${events} deliveries arrived in 5 minutes`);

    const [{ succeeded, other }] = await database.run(
      `SELECT count(*) FILTER (WHERE status = 'succeeded' AND attempts = 1)::int AS succeeded,
              count(*) FILTER (WHERE NOT (status = 'succeeded' AND attempts = 1))::int AS other
         FROM webhook_deliveries WHERE webhook_id = '${webhookId}'`,
    );
    const seconds = (receiver.times[receiver.times.length - 1] - receiver.times[0]) / 1000;
    const rate = (events - 1) / seconds;
    console.log(
      [
        `engine: ${database.engine}, ${os.cpus().length} CPUs, Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`,
        `${events} deliveries in ${seconds.toFixed(2)} s: ${rate.toFixed(0)} events/s`,
        `requests received: ${receiver.times.length} (duplicates: ${receiver.times.length - receiver.ids.size}); succeeded with one attempt: ${succeeded}; other: ${other}`,
        `target (issue 14, PostgreSQL): >= 200 events/s: ${rate >= 200 ? 'met' : 'missed'}`,
      ].join('\n'),
    );
  } finally {
    await stopAll();
    await receiver.close();
    await database.drop();
  }
}

/** A project, a key with every permission and one webhook on everything, through the API. */
async function subscribe(serviceUrl, receiverUrl) {
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' };
  const project = (await post(`${serviceUrl}/admin/v1/projects`, admin, { name: 'Webhook bench' })).project;
  const permissions = ['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage', 'webhooks:manage'];
  const { secret } = await post(`${serviceUrl}/admin/v1/projects/${project.id}/keys`, admin, { name: 'Bench', permissions });
  const key = { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' };
  const { webhook } = await post(`${serviceUrl}/api/v1/webhooks`, key, { url: receiverUrl, events: ['*'] });
  return { projectId: project.id, webhookId: webhook.id };
}

async function post(url, headers, body) {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`POST ${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** N task.created events with a task of realistic size, and a delivery of each, due now. */
function queueBacklog(projectId, webhookId, count) {
  const task = {
    title: 'Benchmark task',
    description: 'x'.repeat(400),
    status: 'todo',
    priority: 'medium',
    assignee: null,
    labels: [],
    sprint: null,
    dueDate: null,
    parentId: null,
    blocked: false,
    dependencies: { blockedBy: [], blocking: [] },
  };
  return `
    WITH queued AS (
      INSERT INTO events (project_id, sequence, type, actor, occurred_at, data)
      SELECT '${projectId}', n, 'task.created', 'Bench (API)', now(),
             json_build_object('task', '${JSON.stringify(task)}'::jsonb || jsonb_build_object('id', gen_random_uuid()))
        FROM generate_series(1, ${count}) n
      RETURNING id
    ),
    numbered AS (
      INSERT INTO event_sequences (project_id, last_sequence) VALUES ('${projectId}', ${count})
      ON CONFLICT (project_id) DO UPDATE SET last_sequence = ${count}
    )
    INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, next_attempt_at)
    SELECT '${projectId}', '${webhookId}', id, now() FROM queued`;
}

/** A receiver that answers 200 at once and notes when each request arrived. */
async function startReceiver() {
  const times = [];
  const ids = new Set();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      times.push(Date.now());
      ids.add(req.headers['webhook-id']);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    times,
    ids,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

async function createDatabase(url) {
  if (!url) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tasks-bench-webhooks-'));
    const { PGlite } = require('@electric-sql/pglite');
    const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm');
    return {
      engine: 'pglite',
      env: { DATA_DIR: dataDir },
      // The service owns the directory while it runs: open it only between runs.
      run: async (sql) => {
        const db = await PGlite.create({ dataDir, extensions: { pg_trgm } });
        try {
          return (await db.query(sql)).rows;
        } finally {
          await db.close();
        }
      },
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `tasks_bench_${randomBytes(6).toString('hex')}`;
  const onServer = async (sql) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };
  await onServer(`CREATE DATABASE ${name}`);
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    engine: 'postgresql',
    env: { DATABASE_URL: own.toString() },
    run: async (sql) => {
      const client = new Client({ connectionString: own.toString() });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    },
    drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
