'use strict';
// npm run bench [-- --quick] [-- --keep]
//
// 1. A database of its own: a new database tasks_bench_<random> on the server of
//    DATABASE_URL, or a temporary PGlite data directory when DATABASE_URL is unset.
// 2. The service's migrations (its own migrator, from dist/), then bulk seeding (seed.js).
// 3. EXPLAIN ANALYZE of the list statements, the service's and the floor's (explain.js).
// 4. The floor (floor.js) in its own process: the list rows, then it stops.
// 5. The service (node dist/main.js) in its own process: every row, then it stops.
// 6. Webhook delivery (webhook-delivery.js): a backlog queued in the tables while the service
//    is stopped, drained by the service started again to a receiver in this process.
// 7. The report (report.js) on stdout and in bench/results/<engine>.md.
// 8. The database or directory is dropped (kept with --keep), also on failure or Ctrl-C.
//
// The floor and the service never run at the same time: on PGlite they could not (one
// process owns the data directory), and on PostgreSQL they would compete for the CPUs.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createBenchDatabase } = require('./databases');
const { seed } = require('./seed');
const { readFixtures } = require('./fixtures');
const { scenarios } = require('./scenarios');
const { startReceiver } = require('./receiver');
const { measureDelivery, sqlRunner } = require('./webhook-delivery');
const { throughput, fixedRate, fetchJson } = require('./load');
const { startServer, stopAll } = require('./processes');
const { explainLists } = require('./explain');
const { render } = require('./report');
const { summarise } = require('./profile');
const { cpuMeter } = require('./cpu');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');

function parseArgs(argv) {
  const flags = new Set(argv.filter((a) => !a.includes('=')));
  const values = Object.fromEntries(argv.filter((a) => a.includes('=')).map((a) => a.replace(/^--/, '').split('=')));
  for (const flag of flags) {
    if (!['--quick', '--keep', '--help', '--no-explain', '--seed-only', '--profile'].includes(flag))
      throw new Error(`unknown option ${flag} (see bench/README.md)`);
  }
  const quick = flags.has('--quick');
  return {
    help: flags.has('--help'),
    quick,
    // Seed (and explain), keep the database, measure nothing: for looking at plans by hand.
    seedOnly: flags.has('--seed-only'),
    keep: flags.has('--keep') || flags.has('--seed-only'),
    explain: !flags.has('--no-explain'),
    // CPU profile of the service over its whole run, summarised in results/<engine>-profile.md.
    profile: flags.has('--profile'),
    // Only these rows (keys of scenarios.js, and webhookDelivery, comma-separated), e.g. --only=listDefault,create.
    only: values.only ? new Set(values.only.split(',')) : null,
    // The backlog of the webhook delivery step.
    webhookEvents: Number(values['webhook-events'] ?? (quick ? 2000 : 5000)),
    bigTasks: Number(values['big-tasks'] ?? (quick ? 10_000 : 100_000)),
    smallProjects: 9,
    smallTasks: Number(values['small-tasks'] ?? (quick ? 1_000 : 10_000)),
    connections: Number(values.connections ?? 32),
    duration: Number(values.duration ?? (quick ? 3 : 10)),
    fixedDuration: Number(values['fixed-duration'] ?? (quick ? 3 : 15)),
    warmup: Number(values.warmup ?? (quick ? 1 : 3)),
  };
}

const log = (message) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** Migrations, seed, fixtures and plans, through the service's own database layer. */
async function prepare(database, args) {
  const { openDatabase } = require(path.join(DIST, 'database/database-engine.js'));
  const { applyMigrations } = require(path.join(DIST, 'database/migrator.js'));
  const engine = await openDatabase(database.options);
  try {
    return await engine.withSession(async (session) => {
      await applyMigrations(session);
      const started = Date.now();
      const projects = await seed(session, args);
      const seedSeconds = (Date.now() - started) / 1000;
      const big = projects[0];
      const writer = projects[1];
      const hooked = projects[2];
      const deepPage = Math.min(2000, Math.ceil(args.bigTasks / 50));
      const fixtures = await readFixtures(session, { big, writer, hooked, deepPage });
      const [counts] = await session.query(`SELECT
          (SELECT count(*)::int FROM tasks) AS tasks,
          (SELECT count(*)::int FROM tasks WHERE parent_id IS NOT NULL) AS subtasks,
          (SELECT count(*)::int FROM task_labels) AS "taskLabels",
          (SELECT count(*)::int FROM task_dependencies) AS dependencies,
          (SELECT count(*)::int FROM sprint_ledger) AS "ledgerRows",
          (SELECT count(*)::int FROM sprints WHERE report IS NOT NULL) AS reports,
          (SELECT count(*)::int FROM comments) AS comments`);
      const [{ version }] = await session.query('SELECT version()');
      let explain = null;
      if (args.explain) {
        const { CursorCodec } = require(path.join(DIST, 'common/pagination/cursor.js'));
        const codec = new CursorCodec(null);
        const [{ value }] = await session.query(`SELECT value FROM service_settings WHERE name = 'cursor_signing_key'`);
        codec.key = Buffer.from(value, 'hex');
        log('explaining the list statements');
        explain = await explainLists(session, { big, fixtures, codec, runs: args.quick ? 20 : 50 });
      }
      return { projects, big, writer, hooked, fixtures, counts, seedSeconds, version, explain };
    });
  } finally {
    await engine.close();
  }
}

// ---- Measuring ----

/**
 * Runs the row's prepare() (scenarios.js) on `server`, if it has one; answers the problem it
 * reports (the row is then skipped), or null.
 */
async function prepareRow(server, scenario) {
  if (!scenario.prepare) return null;
  try {
    await scenario.prepare(server.url);
    return null;
  } catch (error) {
    const problem = `${scenario.name} (${server.name}): ${error.message}`;
    log(`CHECK FAILED: ${problem}`);
    return problem;
  }
}

async function measureRow(server, meter, scenario, args, results, key) {
  // A row may set its own number of connections (bulk create: an importer is not 32 of them).
  const connections = scenario.connections ?? args.connections;
  log(`${server.name}: ${scenario.name}${connections === args.connections ? '' : `, ${connections} connections`}`);
  const warmup = await throughput(server.url, scenario, { connections, duration: args.warmup });
  const mark = await meter.start();
  const result = await throughput(server.url, scenario, { connections, duration: args.duration });
  result.warmupOk = warmup.ok;
  const cpu = await meter.since(mark);
  // (No answer in the row at all, when every request took longer than it: no CPU per request.)
  result.serverCpuMs = cpu.serverMs === null || !result.requests ? null : cpu.serverMs / result.requests;
  result.dbCpuMs = cpu.dbMs === null || !result.requests ? null : cpu.dbMs / result.requests;
  // Tasks per request of the bulk row.
  if (scenario.perRequest) result.itemsPerSecond = result.rps * scenario.perRequest;
  results[key] = result;
  if (result.errors) log(`  ${result.errors} errors: ${JSON.stringify(result.failures)}`);
}

/**
 * A fixed-rate row, after a warm-up at the same rate: the row before it saturated the
 * server, and the first second after that (new connections, a heap grown under load)
 * would otherwise weigh on a p99 taken over a few hundred requests.
 */
async function measureFixed(server, scenario, rate, args) {
  log(`${server.name}: ${scenario.name} at ${rate} ${scenario.steps.length > 1 ? 'pairs' : 'req'}/s`);
  await fixedRate(server.url, scenario, { rate, duration: args.warmup });
  const result = await fixedRate(server.url, scenario, { rate, duration: args.fixedDuration });
  if (result.errors) log(`  ${result.errors} errors: ${JSON.stringify(result.failures)}`);
  return result;
}

const LIST_ROWS = ['listDefault', 'listFiltered', 'listDeep'];
/** The write rows the floor answers too: the service's writes are measured against it. */
const WRITE_ROWS = ['create', 'patch', 'deleteRestore'];
/** The lists right after a change, on the floor too, closed loop and at this many pairs/s. */
const AFTER_CHANGE_ROWS = ['patchList', 'patchListFiltered'];
const AFTER_CHANGE_RATE = 50;
/** Issue 38's searches and filter at a fixed rate, also right after a change (pairs/s). */
const SEARCH_RATE = 10;
/** The sprint report at a fixed rate: a few people opening it at once, not a poll. */
const REPORT_RATE = 10;

const wanted = (args, key) => !args.only || args.only.has(key);

async function runFloor(database, rows, args) {
  const floor = await startServer('floor', [path.join(__dirname, 'floor.js')], database.env);
  let meter = null;
  try {
    meter = await cpuMeter(floor.pid, database.env.DATABASE_URL || null);
    const answers = {};
    for (const key of LIST_ROWS) answers[key] = await fetchJson(floor.url, rows[key], rows[key].steps[0]({}));
    const results = {};
    for (const key of LIST_ROWS.filter((k) => wanted(args, k))) await measureRow(floor, meter, rows[key], args, results, key);
    // The floor at the rate of the p99 targets: whether this machine can meet them at all.
    const fixed = {};
    for (const key of ['listDefault', 'listFiltered'].filter((k) => wanted(args, k))) {
      fixed[key] = await measureFixed(floor, rows[key], 200, args);
    }
    for (const key of WRITE_ROWS.filter((k) => wanted(args, k))) await measureRow(floor, meter, rows[key], args, results, key);
    const problems = [];
    for (const key of AFTER_CHANGE_ROWS.filter((k) => wanted(args, k))) {
      const problem = await prepareRow(floor, rows[key]);
      if (problem) {
        problems.push(problem);
        continue;
      }
      await measureRow(floor, meter, rows[key], args, results, key);
      fixed[key] = await measureFixed(floor, rows[key], AFTER_CHANGE_RATE, args);
    }
    // A run stops between a DELETE and its restore: bring those tasks back. The writes changed
    // what the lists show, so their answers are taken again for the service's check.
    for (const id of rows.deleteRestore.leftInTrash()) {
      await fetchJson(floor.url, rows.deleteRestore, { method: 'POST', path: `/api/v1/trash/${id}/restore` });
    }
    for (const key of LIST_ROWS) answers[key] = await fetchJson(floor.url, rows[key], rows[key].steps[0]({}));
    return { results, answers, fixed, problems };
  } finally {
    await meter?.close();
    await floor.stop();
  }
}

/** The service must answer what the floor answered, and accept our deep cursor. */
async function checkAnswers(service, rows, floorAnswers, fixtures) {
  const problems = [];
  for (const key of LIST_ROWS) {
    const answer = await fetchJson(service.url, rows[key], rows[key].steps[0]({}));
    if (answer.status !== 200) problems.push(`${rows[key].name}: service answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    else if (floorAnswers[key].status !== 200)
      // Said, not thrown: the rows of the service still run (a floor behind the service's cursors, say).
      problems.push(`${rows[key].name}: the floor answered ${floorAnswers[key].status}: ${floorAnswers[key].text.slice(0, 300)}`);
    else {
      // Compared as JSON values, key order included; whitespace may differ (the service
      // sends PostgreSQL's JSON text as it is, the floor JSON.stringify's output).
      const service = JSON.stringify(answer.body);
      const floor = JSON.stringify(JSON.parse(floorAnswers[key].text));
      if (service !== floor) {
        let at = 0;
        while (service[at] === floor[at]) at++;
        problems.push(
          `${rows[key].name}: the floor's answer differs from the service's at character ${at} (both re-serialised): ` +
            `service ...${service.slice(Math.max(0, at - 60), at + 60)}... floor ...${floor.slice(Math.max(0, at - 60), at + 60)}...`,
        );
      }
    }
    if (answer.status === 200 && !answer.body.tasks.length) problems.push(`${rows[key].name}: empty page`);
  }
  for (const [key, cursor, order] of [
    ['listBeforeDeep', fixtures.deepCursor, ''],
    ['listRankBeforeDeep', fixtures.rankDeepCursor, ' (sort=rank)'],
  ]) {
    const before = await fetchJson(service.url, rows[key], rows[key].steps[0]({}));
    if (before.body?.nextCursor !== cursor) {
      problems.push(
        `the service's cursor after page ${fixtures.deepPage - 1}${order} is not the one the harness signed: ${JSON.stringify(before.body?.nextCursor)}`,
      );
    }
  }
  for (const key of ['listRank', 'listRankDeep']) {
    const answer = await fetchJson(service.url, rows[key], rows[key].steps[0]({}));
    const ranks = answer.body?.tasks?.map((task) => task.rank) ?? [];
    if (
      answer.status !== 200 ||
      ranks.length !== 50 ||
      ranks.some((rank, i) => i > 0 && !(Buffer.compare(Buffer.from(ranks[i - 1]), Buffer.from(rank)) < 0))
    )
      problems.push(`${rows[key].name}: answered ${answer.status} with ${ranks.length} tasks, not 50 in rank order: ${answer.text.slice(0, 300)}`);
  }
  return problems;
}

// The service's rows in order: reads first, then writes (which change the data).
// fixedRate: the arrival rate of the p99 row that follows the throughput row (for two-step
// rows, iterations per second: pairs).
const SERVICE_ROWS = [
  { key: 'listDefault' },
  { key: 'listFiltered' },
  { key: 'listDeep' },
  { key: 'listNotModified' },
  { key: 'listDefault', fixedRate: 200 },
  { key: 'listFiltered', fixedRate: 200 },
  { key: 'listDeep', fixedRate: 200 },
  { key: 'listRank' },
  { key: 'listRankDeep' },
  { key: 'filterFour' },
  { key: 'filterFour', fixedRate: 10 },
  { key: 'searchSelective' },
  { key: 'searchSelective', fixedRate: 10 },
  { key: 'searchBroad' },
  { key: 'searchBroad', fixedRate: 10 },
  { key: 'searchRelevance' },
  { key: 'searchRelevance', fixedRate: 10 },
  { key: 'detail' },
  { key: 'commentsFirst' },
  { key: 'commentsDeep' },
  // The sprint reports read the seeded ledger, before any write adds to it.
  { key: 'sprintReport' },
  { key: 'sprintReport', fixedRate: REPORT_RATE },
  { key: 'velocity' },
  { key: 'sprintBurndown' },
  // The creates side by side, so that their CPU per request compares well.
  { key: 'create' },
  { key: 'create', fixedRate: 100 },
  { key: 'commentCreate' },
  { key: 'createKeyed' },
  { key: 'createReplay' },
  { key: 'createWithWebhook' },
  { key: 'bulkCreate' },
  // After the creates: the writer project has their events.
  { key: 'feed100' },
  { key: 'patch' },
  { key: 'patch', fixedRate: 100 },
  { key: 'patchList' },
  { key: 'patchList', fixedRate: AFTER_CHANGE_RATE },
  { key: 'patchListFiltered' },
  { key: 'patchListFiltered', fixedRate: AFTER_CHANGE_RATE },
  { key: 'patchSearchSelective', fixedRate: SEARCH_RATE },
  { key: 'patchSearchBroad', fixedRate: SEARCH_RATE },
  { key: 'move' },
  { key: 'deleteRestore' },
];

/** The service's environment, for its rows and for the webhook delivery step. */
const serviceEnv = (database) => ({
  ...database.env,
  // Far above what the load sends: the rate limit must not answer 429 here.
  RATE_LIMIT_PER_MINUTE: '10000000',
  ADMIN_TOKEN: '',
  // The webhook's receiver is on 127.0.0.1 (bench/receiver.js).
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
});

/** One webhook on every event in the hooked project, to `receiver`, made through the API with the project's key. */
async function subscribe(service, rows, receiver) {
  const answer = await fetchJson(service.url, rows.createWithWebhook, {
    method: 'POST',
    path: '/api/v1/webhooks',
    body: { url: receiver.url, events: ['*'], description: 'Bench receiver' },
  });
  if (answer.status !== 201) throw new Error(`POST /api/v1/webhooks answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  return answer.body.webhook.id;
}

async function runService(database, rows, args, receiver) {
  const profileDir = args.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'tasks-bench-profile-')) : null;
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '-r', path.join(__dirname, 'profile-preload.js')] : [];
  const service = await startServer('service', [...nodeArgs, path.join(DIST, 'main.js')], serviceEnv(database), {
    stopSignal: profileDir ? 'SIGUSR2' : 'SIGTERM',
  });
  const results = {};
  const fixed = {};
  let problems = [];
  let meter = null;
  let webhookId = null;
  try {
    meter = await cpuMeter(service.pid, database.env.DATABASE_URL || null);
    problems = await checkAnswers(service, rows, args.floorAnswers, args.fixtures);
    for (const problem of problems) log(`CHECK FAILED: ${problem}`);
    if (wanted(args, 'createWithWebhook') || wanted(args, 'webhookDelivery')) webhookId = await subscribe(service, rows, receiver);
    for (const row of SERVICE_ROWS.filter((r) => wanted(args, r.key))) {
      const problem = await prepareRow(service, rows[row.key]);
      if (problem) {
        problems.push(problem);
        continue;
      }
      if (row.fixedRate) {
        fixed[row.key] = await measureFixed(service, rows[row.key], row.fixedRate, args);
        continue;
      }
      receiver.reset();
      await measureRow(service, meter, rows[row.key], args, results, row.key);
      if (row.key === 'createWithWebhook') {
        // Every create of the row (and of its warm-up) is an event for the receiver: wait for
        // the worker to deliver them (up to 10 s), and note how many arrived.
        const created = results[row.key].ok + results[row.key].warmupOk;
        const until = Date.now() + 10_000;
        while (receiver.ids.size < created && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
        results[row.key].delivered = receiver.ids.size;
      }
    }
    // A run stops between a DELETE and its restore: bring those tasks back.
    for (const id of rows.deleteRestore.leftInTrash()) {
      await fetchJson(service.url, rows.deleteRestore, { method: 'POST', path: `/api/v1/trash/${id}/restore` });
    }
  } catch (error) {
    error.message += `\n--- service output ---\n${service.output().slice(-4000)}`;
    throw error;
  } finally {
    await meter?.close();
    await service.stop();
  }
  let profile = null;
  if (profileDir) {
    const file = fs.readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
    profile = file ? summarise(path.join(profileDir, file)) : 'No profile was written.\n';
    if (args.keep) log(`kept the raw profile in ${profileDir} (open it in Chrome DevTools)`);
    else fs.rmSync(profileDir, { recursive: true, force: true });
  }
  return { results, fixed, problems, profile, webhookId };
}

// ---- Main ----

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(fs.readFileSync(path.join(__dirname, 'README.md'), 'utf8'));
    return;
  }
  if (!fs.existsSync(path.join(DIST, 'main.js'))) throw new Error('dist/main.js is missing: run `npm run build` first');
  const engine = process.env.DATABASE_URL ? 'postgresql' : 'pglite';
  const startedAt = Date.now();

  const database = await createBenchDatabase(process.env.DATABASE_URL);
  let dropped = false;
  const cleanUp = async () => {
    if (dropped) return;
    dropped = true;
    if (args.keep) log(`kept ${database.where}`);
    else await database.drop().then(() => log(`dropped ${database.where}`));
  };
  // Ctrl-C: stop the servers first (a PGlite directory must not be removed under one).
  const interrupted = (code) => () =>
    void stopAll()
      .then(cleanUp)
      .finally(() => process.exit(code));
  process.once('SIGINT', interrupted(130));
  process.once('SIGTERM', interrupted(143));

  try {
    log(`${engine}: seeding ${args.bigTasks} + ${args.smallProjects} x ${args.smallTasks} tasks in ${database.where}`);
    const prepared = await prepare(database, args);
    log(`seeded in ${prepared.seedSeconds.toFixed(1)} s`);
    const resultsDir = path.join(__dirname, 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    if (prepared.explain) fs.writeFileSync(path.join(resultsDir, `${engine}-explain.txt`), prepared.explain.plans + '\n');
    if (args.seedOnly) {
      log(`seeded; ${JSON.stringify(database.env)}; big project ${prepared.big.id}, key ${prepared.big.key}`);
      return;
    }
    const rows = scenarios({
      bigKey: prepared.big.key,
      writerKey: prepared.writer.key,
      hookedKey: prepared.hooked.key,
      fixtures: prepared.fixtures,
      connections: args.connections,
    });

    const floor = await runFloor(database, rows, args);
    const receiver = await startReceiver();
    let service;
    let delivery = null;
    try {
      service = await runService(database, rows, { ...args, floorAnswers: floor.answers, fixtures: prepared.fixtures }, receiver);
      if (wanted(args, 'webhookDelivery')) {
        log(`webhook delivery: ${args.webhookEvents} events queued, the service started again to deliver them`);
        delivery = await measureDelivery({
          run: sqlRunner(database.env),
          start: () => startServer('service', [path.join(DIST, 'main.js')], serviceEnv(database)),
          cpu: (pid) => cpuMeter(pid, database.env.DATABASE_URL || null),
          projectId: prepared.hooked.id,
          webhookId: service.webhookId,
          receiver,
          events: args.webhookEvents,
          log: (message) => log(message.replace('{engine}', engine)),
        });
        log(`webhook delivery: ${delivery.received} in ${delivery.seconds.toFixed(2)} s, ${delivery.rate.toFixed(0)} events/s`);
        for (const problem of delivery.problems) log(`CHECK FAILED: webhook delivery: ${problem}`);
      }
    } finally {
      await receiver.close();
    }
    const problems = [...floor.problems, ...service.problems, ...(delivery?.problems.map((p) => `webhook delivery: ${p}`) ?? [])];

    const names = Object.fromEntries(Object.entries(rows).map(([key, row]) => [key, row.name]));
    const report = render({
      engine,
      quick: args.quick,
      date: new Date().toISOString(),
      databaseVersion:
        engine === 'pglite'
          ? `PGlite ${require(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json')).version} (${prepared.version.split(',')[0]})`
          : prepared.version.split(',')[0],
      settings: args,
      checksPassed: problems.length === 0,
      seedSeconds: prepared.seedSeconds,
      counts: { ...prepared.counts, bigTasks: args.bigTasks, smallProjects: args.smallProjects, smallTasks: args.smallTasks },
      explain: prepared.explain?.summary,
      explainRuns: args.quick ? 20 : 50,
      results: {
        service: service.results,
        floor: floor.results,
        fixed: service.fixed,
        floorFixed: floor.fixed,
        names,
        deepPage: prepared.fixtures.deepPage,
        commentsDeepPage: prepared.fixtures.comments.deepPage,
        delivery,
      },
    });
    const checks = problems.length ? `\n## Check failures\n\n${problems.map((p) => `- ${p}`).join('\n')}\n` : '';
    const text =
      report +
      checks +
      `\nTotal run time: ${((Date.now() - startedAt) / 1000).toFixed(0)} s (${args.quick ? 'npm run bench -- --quick' : 'npm run bench'}).\n`;
    process.stdout.write('\n' + text);
    fs.writeFileSync(path.join(resultsDir, `${engine}.md`), text);
    if (service.profile) {
      const rowsRun = SERVICE_ROWS.filter((r) => wanted(args, r.key)).map((r) => rows[r.key].name + (r.fixedRate ? ` at ${r.fixedRate}/s` : ''));
      fs.writeFileSync(
        path.join(resultsDir, `${engine}-profile.md`),
        `# CPU profile of the service (${engine}${args.quick ? ', quick run' : ''})\n\nRows: ${[...new Set(rowsRun)].join('; ')}.\n\n${service.profile}`,
      );
      log(`profile summary in bench/results/${engine}-profile.md`);
    }
    log(`written to bench/results/${engine}.md`);
    if (problems.length) process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
