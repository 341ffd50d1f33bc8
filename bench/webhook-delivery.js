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
//
// measureDelivery (steps 2 to 4) is also the last step of `npm run bench` (run.js), on its database.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { startServer, stopAll } = require('./processes');
const { createBenchDatabase, openPglite } = require('./databases');
const { startReceiver } = require('./receiver');

const { fetch } = globalThis;

const ROOT = path.resolve(__dirname, '..');
const ADMIN_TOKEN = randomBytes(16).toString('hex');
/** The actor of the queued backlog's events, to tell them from the events of real changes. */
const BACKLOG_ACTOR = 'Bench backlog';

async function main() {
  const events = Number(process.argv.find((arg) => arg.startsWith('--events='))?.split('=')[1] ?? 5000);
  if (!fs.existsSync(path.join(ROOT, 'dist/main.js'))) throw new Error('Build first: npm run build');
  const database = await createBenchDatabase(process.env.DATABASE_URL);
  database.run = sqlRunner(database.env);
  const receiver = await startReceiver();
  try {
    const env = { ...database.env, ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '1000000' };
    const service = await startServer('service', ['dist/main.js'], env);
    const { projectId, webhookId } = await subscribe(service.url, receiver.url);
    await service.stop();

    const result = await measureDelivery({
      run: database.run,
      start: () => startServer('service', ['dist/main.js'], env),
      projectId,
      webhookId,
      receiver,
      events,
      log: (message) => console.log(message.replace('{engine}', database.engine)),
    });
    console.log(
      [
        `engine: ${database.engine}, ${os.cpus().length} CPUs, Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`,
        `${result.expected} deliveries in ${result.seconds.toFixed(2)} s: ${result.rate.toFixed(0)} events/s`,
        `requests received: ${result.received} (duplicates: ${result.duplicates}); succeeded with one attempt: ${result.succeeded}; other: ${result.other}`,
        `target (issue 14, PostgreSQL): >= 200 events/s: ${result.rate >= 200 ? 'met' : 'missed'}`,
      ].join('\n'),
    );
    if (result.problems.length) throw new Error(result.problems.join('; '));
  } finally {
    await stopAll();
    await receiver.close();
    await database.drop();
  }
}

/**
 * The measurement, also a step of run.js (on its database, after the service rows): with the
 * service stopped, `events` task.created events and a delivery of each to `webhookId` are
 * queued straight into the tables; then the service is started (`start`) and its worker
 * drains the backlog to `receiver`. Deliveries still pending from before are sent too and
 * counted. Answers the rate ((received - 1) / (time of the last - time of the first)), and
 * problems: deliveries missing, sent twice, or not `succeeded` at the first attempt. With
 * `cpu` (pid => a cpu.js meter), also the CPU per delivery, process + database, from when the
 * service was ready (its start-up left out, and with it the deliveries sent before).
 */
async function measureDelivery({ run, start, cpu, projectId, webhookId, receiver, events, log = () => undefined }) {
  const [{ pending }] = await run(`SELECT count(*)::int AS pending FROM webhook_deliveries WHERE webhook_id = '${webhookId}' AND status = 'pending'`);
  await run(queueBacklog(projectId, webhookId, events));
  const expected = events + pending;
  log(`Queued ${events} deliveries on {engine}${pending ? ` (and ${pending} were pending)` : ''}; starting the service again.`);
  receiver.reset();
  const service = await start();
  const deadline = Date.now() + 5 * 60_000;
  let cpuMsPerDelivery = null;
  let meter = null;
  try {
    meter = cpu ? await cpu(service.pid) : null;
    const mark = await meter?.start();
    const before = receiver.times.length;
    while (receiver.times.length < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    if (meter) {
      const used = await meter.since(mark);
      const delivered = receiver.times.length - before;
      if (used.serverMs !== null && delivered > 0) cpuMsPerDelivery = (used.serverMs + (used.dbMs ?? 0)) / delivered;
    }
    // A little longer: a duplicate would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    await meter?.close();
    await service.stop();
  }
  const received = receiver.times.length;
  const [{ succeeded, other }] = await run(
    `SELECT count(*) FILTER (WHERE d.status = 'succeeded' AND d.attempts = 1)::int AS succeeded,
            count(*) FILTER (WHERE NOT (d.status = 'succeeded' AND d.attempts = 1))::int AS other
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.webhook_id = '${webhookId}' AND e.actor = '${BACKLOG_ACTOR}'`,
  );
  const seconds = received > 1 ? (receiver.times[received - 1] - receiver.times[0]) / 1000 : NaN;
  const problems = [];
  if (received < expected) problems.push(`only ${received} of ${expected} deliveries arrived in 5 minutes`);
  if (received !== receiver.ids.size) problems.push(`${received - receiver.ids.size} deliveries arrived twice`);
  if (other) problems.push(`${other} of the ${events} queued deliveries did not succeed at their first attempt`);
  return {
    events,
    expected,
    received,
    duplicates: received - receiver.ids.size,
    seconds,
    rate: (received - 1) / seconds,
    cpuMsPerDelivery,
    succeeded,
    other,
    problems,
  };
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
  // Numbered after the project's last event (run.js queues them in a project that has some).
  return `
    WITH base AS (SELECT COALESCE((SELECT last_sequence FROM event_sequences WHERE project_id = '${projectId}'), 0) AS last),
    queued AS (
      INSERT INTO events (project_id, sequence, type, actor, occurred_at, data)
      SELECT '${projectId}', base.last + n, 'task.created', '${BACKLOG_ACTOR}', now(),
             json_build_object('task', '${JSON.stringify(task)}'::jsonb || jsonb_build_object('id', gen_random_uuid()))
        FROM base, generate_series(1, ${count}) n
      RETURNING id
    ),
    numbered AS (
      INSERT INTO event_sequences AS s (project_id, last_sequence) VALUES ('${projectId}', ${count})
      ON CONFLICT (project_id) DO UPDATE SET last_sequence = s.last_sequence + ${count}
    )
    INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, next_attempt_at)
    SELECT '${projectId}', '${webhookId}', id, now() FROM queued`;
}

/**
 * Runs one SQL statement on the database of `env` (DATABASE_URL, or the PGlite DATA_DIR) with a
 * connection of its own, answering its rows. On PGlite the service owns the directory while it
 * runs: call it only while the service is stopped.
 */
function sqlRunner(env) {
  if (env.DATABASE_URL) {
    return async (sql) => {
      const client = new Client({ connectionString: env.DATABASE_URL });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    };
  }
  return async (sql) => {
    const db = await openPglite(env.DATA_DIR);
    try {
      return (await db.query(sql)).rows;
    } finally {
      await db.close();
    }
  };
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}

module.exports = { measureDelivery, sqlRunner };
