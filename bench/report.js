'use strict';
// The markdown report: what ran where, the tables, and the targets of the issue (met or
// missed). Printed to stdout and written to bench/results/<engine>.md.

const os = require('node:os');

const num = (value, digits = 1) => (value === null || value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits));
const int = (value) => (value === null || value === undefined || Number.isNaN(value) ? '-' : Math.round(value).toLocaleString('en-US'));
const table = (header, rows) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

function machine() {
  const cpus = os.cpus();
  return `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; ${os.type()} ${os.release()}`;
}

/** Rows in the order of the tables. */
const ROWS = [
  'listDefault',
  'listFiltered',
  'listDeep',
  'listNotModified',
  'listRank',
  'listRankDeep',
  'detail',
  'commentsFirst',
  'commentsDeep',
  'sprintReport',
  'velocity',
  'sprintBurndown',
  'create',
  'commentCreate',
  'createKeyed',
  'createReplay',
  'createWithWebhook',
  'bulkCreate',
  'feed100',
  'patch',
  'patchList',
  'patchListFiltered',
  'patchSearchSelective',
  'patchSearchBroad',
  'move',
  'deleteRestore',
];

/**
 * The create and patch rows of the last full run on PostgreSQL before issue 26 (bench/results/postgresql.md
 * of 2026-11-24, 100 000 tasks): issue 26 asks that the writes with the sprint ledger (and ranks)
 * stay within 10 % of them. Its patch changed title and priority; the row now changes the estimate
 * too, so that the ledger is written. Shown for reference only: that run was made on another
 * machine, and a run here moves by 10 % from one minute to the next; the budget is checked with
 * both builds side by side (npm run bench:ab, results/postgresql-same-machine-ab.md).
 */
const BEFORE_LEDGER = {
  date: '2026-11-24',
  create: { rps: 422, cpuMs: 3.73 },
  patch: { rps: 593, cpuMs: 2.6 },
};
/** Rows whose iteration is two requests. */
const PAIRS = new Set(['deleteRestore', 'patchList', 'patchListFiltered', 'patchSearchSelective', 'patchSearchBroad']);

/** CPU ms per request, the server process's and the database's (on PGlite, inside the process). */
const totalCpu = (x) => (x && x.serverCpuMs !== null && x.serverCpuMs !== undefined ? x.serverCpuMs + (x.dbCpuMs ?? 0) : NaN);

/** The targets of the issues (13, 14, 15, 17, 26 and the list performance issue), evaluated on this run's numbers. */
function targets(engine, r, counts) {
  const ratio = (svc, floor) => (svc && floor ? svc.rps / floor.rps : NaN);
  const clean = (...results) => results.every((x) => x && x.errors === 0);
  // `known`: whether the row(s) behind `measured` ran at all.
  const check = (name, measured, ok, applies, valid, known = !measured.startsWith('-')) => ({
    name,
    measured,
    result: !known ? 'not measured' : !applies ? 'reference only' : !valid ? 'missed (errors)' : ok ? 'met' : 'missed',
  });
  const pg = engine === 'postgresql';
  const list = [];
  const rDefault = ratio(r.service.listDefault, r.floor.listDefault);
  const rFiltered = ratio(r.service.listFiltered, r.floor.listFiltered);
  list.push(
    check(
      'PostgreSQL: list default page >= 0.6 x floor',
      `${num(rDefault, 2)} x`,
      rDefault >= 0.6,
      pg,
      clean(r.service.listDefault, r.floor.listDefault),
    ),
  );
  list.push(
    check(
      'PostgreSQL: filtered list >= 0.6 x floor',
      `${num(rFiltered, 2)} x`,
      rFiltered >= 0.6,
      pg,
      clean(r.service.listFiltered, r.floor.listFiltered),
    ),
  );
  for (const [key, label] of [
    ['listDefault', 'list default page'],
    ['listFiltered', 'filtered list'],
  ]) {
    const fixed = r.fixed[key];
    list.push(check(`PostgreSQL: ${label} p99 < 50 ms at 200 req/s`, `${num(fixed?.p99)} ms`, fixed?.p99 < 50, pg, clean(fixed)));
  }
  const deepCost = r.service.listDefault && r.service.listDeep ? r.service.listDefault.rps / r.service.listDeep.rps : NaN;
  list.push(
    check(
      `PostgreSQL: page ${r.deepPage} by cursor <= 1.2 x the cost of page 1 (req/s of page 1 / req/s of page ${r.deepPage})`,
      `${num(deepCost, 2)} x`,
      deepCost <= 1.2,
      pg,
      clean(r.service.listDefault, r.service.listDeep),
    ),
  );
  // Issue 26: the backlog order's keyset, the sprint report, the writes with the ledger.
  const rankDeepCost = r.service.listRank && r.service.listRankDeep ? r.service.listRank.rps / r.service.listRankDeep.rps : NaN;
  list.push(
    check(
      `PostgreSQL: sort=rank page ${r.deepPage} by cursor <= 1.2 x the cost of page 1 (req/s of page 1 / req/s of page ${r.deepPage})`,
      `${num(rankDeepCost, 2)} x`,
      rankDeepCost <= 1.2,
      pg,
      clean(r.service.listRank, r.service.listRankDeep),
    ),
  );
  const report = r.fixed.sprintReport;
  list.push(
    check(
      `PostgreSQL: ${r.names.sprintReport} p99 < 50 ms at ${report?.rate ?? '-'} req/s`,
      `${num(report?.p99)} ms`,
      report?.p99 < 50,
      pg,
      clean(report),
    ),
  );
  for (const key of ['create', 'patch']) {
    const now = r.service[key];
    const before = BEFORE_LEDGER[key];
    list.push(
      check(
        `PostgreSQL: ${r.names[key]} with the ledger against the req/s of the full run of ${BEFORE_LEDGER.date} (${before.rps}, another machine; the budget is checked by bench:ab)`,
        `${num(now?.rps / before.rps, 2)} x`,
        now?.rps / before.rps >= 0.9,
        false,
        clean(now),
      ),
      check(
        `PostgreSQL: ${r.names[key]} with the ledger against the CPU per request of the full run of ${BEFORE_LEDGER.date} (${before.cpuMs} ms, another machine; the budget, <= 1.1 x, is checked by bench:ab)`,
        `${num(totalCpu(now) / before.cpuMs, 2)} x`,
        totalCpu(now) / before.cpuMs <= 1.1,
        false,
        clean(now),
        Number.isFinite(totalCpu(now)),
      ),
    );
  }
  for (const [key, label] of [
    ['create', 'create'],
    ['patch', 'patch'],
    ['deleteRestore', 'delete + restore'],
  ]) {
    const writeRatio = ratio(r.service[key], r.floor[key]);
    list.push(check(`PostgreSQL: ${label} >= 0.5 x floor`, `${num(writeRatio, 2)} x`, writeRatio >= 0.5, pg, clean(r.service[key], r.floor[key])));
  }
  for (const [key, label] of [
    ['create', 'create'],
    ['patch', 'patch'],
  ]) {
    const fixed = r.fixed[key];
    list.push(check(`PostgreSQL: ${label} p99 < 50 ms at 100 req/s`, `${num(fixed?.p99)} ms`, fixed?.p99 < 50, pg, clean(fixed)));
  }
  // Issue 13: the costs of Idempotency-Key and of a conditional GET, in CPU per request (process + database).
  const create = r.service.create;
  const cpuRatio = (x, base) => totalCpu(x) / totalCpu(base);
  const keyed = cpuRatio(r.service.createKeyed, create);
  list.push(
    check(
      'create with Idempotency-Key <= 1.3 x the CPU of a create (CPU per request, process + database)',
      `${num(keyed, 2)} x`,
      keyed <= 1.3,
      true,
      clean(r.service.createKeyed, create),
    ),
  );
  // "A plain list page read from the database": the floor's default page (key, page and count read on every request).
  const page = r.floor.listDefault;
  for (const [key, label] of [
    ['createReplay', 'replayed create'],
    ['listNotModified', 'conditional list GET (304)'],
  ]) {
    list.push(
      check(
        `${label} costs less CPU per request than a list page read from the database (the floor's default page)`,
        `${num(totalCpu(r.service[key]), 2)} ms vs ${num(totalCpu(page), 2)} ms`,
        totalCpu(r.service[key]) < totalCpu(page),
        true,
        clean(r.service[key], page),
        Number.isFinite(totalCpu(r.service[key])) && Number.isFinite(totalCpu(page)),
      ),
    );
  }
  // Issue 37: a comment's create against a task's, and the comment list's keyset.
  const comment = cpuRatio(r.service.commentCreate, create);
  list.push(
    check(
      'comment create <= 1.1 x the CPU of a task create (CPU per request, process + database)',
      `${num(comment, 2)} x`,
      comment <= 1.1,
      true,
      clean(r.service.commentCreate, create),
    ),
  );
  const commentsDeepCost = r.service.commentsFirst && r.service.commentsDeep ? r.service.commentsFirst.rps / r.service.commentsDeep.rps : NaN;
  list.push(
    check(
      `comments page ${r.commentsDeepPage} by cursor <= 1.2 x the cost of page 1 (req/s of page 1 / req/s of page ${r.commentsDeepPage})`,
      `${num(commentsDeepCost, 2)} x`,
      commentsDeepCost <= 1.2,
      true,
      clean(r.service.commentsFirst, r.service.commentsDeep),
    ),
  );
  // Issue 14: the outbox in the write path, and the worker's rate.
  const hooked = cpuRatio(r.service.createWithWebhook, create);
  list.push(
    check(
      'create with a webhook <= 1.25 x the CPU of a create (CPU per request, process + database; the delivery included)',
      `${num(hooked, 2)} x`,
      hooked <= 1.25,
      true,
      clean(r.service.createWithWebhook, create),
    ),
  );
  // The same without the delivery of the event (its CPU from the delivery step): the write path alone.
  const writeOnly = (totalCpu(r.service.createWithWebhook) - (r.delivery?.cpuMsPerDelivery ?? NaN)) / totalCpu(create);
  list.push(
    check(
      'create with a webhook, less the CPU of one delivery (delivery step), <= 1.25 x the CPU of a create: the write path alone',
      `${num(writeOnly, 2)} x`,
      writeOnly <= 1.25,
      false,
      clean(r.service.createWithWebhook, create),
    ),
  );
  const delivery = r.delivery;
  list.push(
    check(
      'PostgreSQL: webhook delivery >= 200 events/s to a receiver that answers at once',
      `${num(delivery?.rate, 0)} events/s`,
      delivery?.rate >= 200,
      pg,
      delivery && delivery.problems.length === 0,
    ),
  );
  // Issue 15: bulk create against single creates.
  const bulk = r.service.bulkCreate && create ? r.service.bulkCreate.itemsPerSecond / create.rps : NaN;
  list.push(
    check('PostgreSQL: bulk create >= 5 x the tasks/s of single creates', `${num(bulk, 1)} x`, bulk >= 5, pg, clean(r.service.bulkCreate, create)),
  );
  // The second request of a pair right after a change, at a fixed rate, from its sending: issue 17's
  // lists, and issue 38's searches, which the list cache cannot answer then either.
  const searchBound = counts?.bigTasks >= 1_000_000 ? 200 : 50;
  for (const [key, what, bound] of [
    ['patchList', 'list right after a change (default)', 50],
    ['patchListFiltered', 'list right after a change (filtered)', 50],
    ['patchSearchSelective', 'selective search right after a change', searchBound],
    ['patchSearchBroad', 'broad search right after a change', searchBound],
  ]) {
    const fixed = r.fixed[key];
    const afterP99 = fixed?.steps?.[1]?.p99;
    list.push(
      check(
        `PostgreSQL: ${what} p99 < ${bound} ms at ${fixed?.rate ?? '-'} pairs/s (its latency, from its sending)`,
        `${num(afterP99)} ms`,
        afterP99 < bound,
        pg,
        clean(fixed),
      ),
    );
  }
  const pgliteList = r.service.listDefault?.rps;
  list.push(check('PGlite: list default page >= 300 req/s', `${num(pgliteList, 0)} req/s`, pgliteList >= 300, !pg, clean(r.service.listDefault)));
  return list;
}

function render(run) {
  const { engine, quick, settings, counts, results: r } = run;
  const lines = [];
  lines.push(`# Benchmark on ${engine === 'postgresql' ? 'PostgreSQL' : 'embedded PGlite'}${quick ? ' (quick run)' : ''}`);
  lines.push('');
  lines.push(`- Date: ${run.date}`);
  lines.push(
    `- Machine: ${machine()}; load average at start ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} (other work may share it)`,
  );
  lines.push(`- Node ${process.version}; database: ${run.databaseVersion}`);
  lines.push(
    `- Data: big project ${int(counts.bigTasks)} tasks, plus ${counts.smallProjects} projects of ${int(counts.smallTasks)}; ` +
      `in all ${int(counts.tasks)} tasks, ${int(counts.taskLabels)} task labels, ${int(counts.dependencies)} dependencies, ` +
      `${int(counts.subtasks)} subtasks, ${int(counts.ledgerRows)} sprint ledger rows (${int(counts.reports)} closed sprints with a frozen report), ` +
      `${int(counts.comments)} comments; seeded in ${num(run.seedSeconds)} s`,
  );
  lines.push(
    `- Throughput rows: autocannon, ${settings.connections} connections, ${settings.duration} s each after ${settings.warmup} s of warm-up. ` +
      `Fixed-rate rows: open loop, evenly spaced, ${settings.fixedDuration} s after ${settings.warmup} s at the same rate, latency from the time each request was due.`,
  );
  lines.push(
    `- Floor: bench/floor.js (node:http + ${engine === 'postgresql' ? 'pg' : '@electric-sql/pglite'}, key lookup + one list statement per list request; the service's transaction shape for create, patch and delete + restore), measured just before the service, on the same data; ${run.checksPassed ? "its answers were checked equal, as JSON, to the service's" : "**its answers differ from the service's: see Check failures below**"}.`,
  );
  lines.push('- Only ratios within one run mean much: the machine is shared and noisy.');
  lines.push('');
  lines.push('## Throughput (closed loop)');
  lines.push('');
  const rows = [];
  for (const key of ROWS) {
    const s = r.service[key];
    const f = r.floor[key];
    if (!s) continue;
    const connections = s.connections === settings.connections ? '' : `, ${s.connections} connections`;
    const name = PAIRS.has(key)
      ? `${r.names[key]} (${num(s.iterationsPerSecond, 0)} pairs/s)`
      : s.itemsPerSecond !== undefined
        ? `${r.names[key]} (${int(s.itemsPerSecond)} tasks/s${connections})`
        : `${r.names[key]}${connections ? ` (${connections.slice(2)})` : ''}`;
    rows.push([
      name,
      int(s.rps),
      num(s.p50),
      num(s.p99),
      String(s.errors),
      f ? int(f.rps) : '',
      f ? num(f.p50) : '',
      f ? num(f.p99) : '',
      f ? `${num(s.rps / f.rps, 2)} x` : '',
    ]);
  }
  lines.push(table(['row', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'floor req/s', 'floor p50', 'floor p99', 'service/floor'], rows));
  lines.push('');
  lines.push(
    'Pairs: delete + restore is DELETE /api/v1/tasks/{id} then POST /api/v1/trash/{id}/restore; patch + list is PATCH /api/v1/tasks/{id} (new title) then GET /api/v1/tasks, so the list cannot reuse a remembered page or total; patch + filtered list changes the title of a task on the filtered page (keeping the search word) then reads that page; patch + search changes the title of a task then searches (no remembered page answers it; its total is brought up to date from the changed row). req/s and latencies count each request. ' +
      'The 304 row counts 304 answers as successes; the replay row counts 201 answers (each connection replays its own key, created once before the row); bulk create sends 100 tasks per request. ' +
      "Patch changes title, priority and estimate; one patched task in four is in the big project's active sprint, whose re-estimates write the sprint ledger. " +
      'Move places a task right before or after another (POST /api/v1/tasks/{id}/move), both from 2 000 tasks of the big project, no task in two requests at once. ' +
      "The sprint report and burndown are the big project's active sprint's, computed from its ledger at each request; velocity reads the frozen reports of the last 6 closed sprints.",
  );
  const hooked = r.service.createWithWebhook;
  if (hooked) {
    lines.push('');
    lines.push(
      `Create with a webhook: ${int(hooked.ok + hooked.warmupOk)} tasks created as the load generator counts them (warm-up included; requests cut off at the end of a run still complete in the service), ${int(hooked.delivered)} events delivered to the receiver by the service's worker during the row and up to 10 s after it. ` +
        "The worker runs in the service process, so its CPU is in the row's CPU per request.",
    );
  }
  lines.push('');
  lines.push('## CPU time per request (throughput rows)');
  lines.push('');
  lines.push(
    'From /proc: the server process (Node, and on PGlite the database too, which runs inside it) and, on PostgreSQL, the backends of the bench database. ' +
      'Less sensitive to other work on the machine than requests/s.',
  );
  lines.push('');
  const cpuRows = [];
  for (const key of ROWS) {
    const s = r.service[key];
    const f = r.floor[key];
    if (!s) continue;
    cpuRows.push([
      r.names[key],
      num(s.serverCpuMs, 2),
      num(s.dbCpuMs, 2),
      num(totalCpu(s), 2),
      f ? num(f.serverCpuMs, 2) : '',
      f ? num(f.dbCpuMs, 2) : '',
      f ? num(totalCpu(f), 2) : '',
      f ? `${num(totalCpu(s) / totalCpu(f), 2)} x` : '',
    ]);
  }
  lines.push(
    table(
      ['row', 'service process ms', 'service db ms', 'service total ms', 'floor process ms', 'floor db ms', 'floor total ms', 'total service/floor'],
      cpuRows,
    ),
  );
  lines.push('');
  lines.push('## Fixed rate (open loop)');
  lines.push('');
  const fixedRow = (who, key, x) => {
    const list = PAIRS.has(key) ? x.steps?.[1] : null;
    return [
      r.names[key],
      who,
      `${x.rate} ${PAIRS.has(key) ? 'pairs' : 'req'}`,
      num(x.achieved),
      num(x.p50),
      num(x.p99),
      num(x.max),
      list ? num(list.p50) : '',
      list ? num(list.p99) : '',
      String(x.errors),
    ];
  };
  lines.push(
    table(
      ['row', 'server', 'rate/s', 'achieved/s', 'p50 ms', 'p99 ms', 'max ms', 'second request p50', 'second request p99', 'errors'],
      [
        ...Object.entries(r.fixed).map(([key, x]) => fixedRow('service', key, x)),
        ...Object.entries(r.floorFixed ?? {}).map(([key, x]) => fixedRow('floor', key, x)),
      ],
    ),
  );
  lines.push('');
  lines.push(
    'achieved/s below the rate: the server could not keep up, and latencies grow for as long as the row lasts. ' +
      'p50, p99 and max are per iteration from when it was due: one request, or for the pairs the patch and the list together. ' +
      "'second request' is the list of a pair alone, from when it was sent (right after the patch answered): the list right after a change, which the targets of issue 17 are about.",
  );
  if (r.delivery) {
    const d = r.delivery;
    lines.push('');
    lines.push('## Webhook delivery');
    lines.push('');
    lines.push(
      `${int(d.events)} task.created events and their deliveries queued in the tables while the service was stopped (webhook-delivery.js), ` +
        `${d.expected > d.events ? `with ${int(d.expected - d.events)} still pending from the rows, ` : ''}then the service started again: ` +
        `its worker delivered ${int(d.received)} in ${num(d.seconds, 2)} s to a receiver in the harness that answers 200 at once: **${num(d.rate, 0)} events/s**; ` +
        `duplicates ${d.duplicates}; succeeded at the first attempt ${int(d.succeeded)} of ${int(d.events)}. ` +
        `CPU per delivery (process + database, from when the service was ready): ${num(d.cpuMsPerDelivery, 2)} ms.`,
    );
  }
  if (run.explain) {
    lines.push('');
    lines.push(`## Database time per statement (harness to database, mean of ${run.explainRuns} runs, no load)`);
    lines.push('');
    lines.push(
      'The service remembers pages and totals per project version (src/tasks/task-list-cache.ts): a page asked again while nothing changed costs one version read; another page of a list whose total is known skips the count; after a change the page and the count are read again. The floor counts every time.',
    );
    lines.push('');
    lines.push(
      table(
        [
          'statement',
          'service: page remembered (version read)',
          'service: total remembered (page read)',
          'service: after a change (page + count)',
          'floor SQL ms',
        ],
        run.explain.map((x) => [
          x.name,
          x.serviceRepeated == null ? '' : num(x.serviceRepeated, 2),
          x.service === null ? 'not rebuilt' : num(x.service, 2),
          x.serviceCounted == null ? '' : num(x.serviceCounted, 2),
          x.floor === null ? '' : num(x.floor, 2),
        ]),
      ),
    );
    lines.push('');
    lines.push(`Plans: bench/results/${engine}-explain.txt`);
  }
  lines.push('');
  lines.push('## Targets');
  lines.push('');
  if (quick) lines.push(`Quick run: ${int(counts.bigTasks)} tasks in the big project, not the 100 000 the targets are set for; indicative only.\n`);
  lines.push(
    table(
      ['target', 'measured', 'result'],
      targets(engine, r, counts).map((t) => [t.name, t.measured, t.result]),
    ),
  );
  const failures = Object.entries(r.service)
    .concat(Object.entries(r.fixed))
    .concat(Object.entries(r.floor))
    .concat(Object.entries(r.floorFixed ?? {}))
    .filter(([, x]) => x && x.errors > 0)
    .map(([key, x]) => `${r.names[key]} (${x.mode}): ${JSON.stringify(x.failures)}`);
  if (failures.length) {
    lines.push('');
    lines.push(`Errors by cause (HTTP status, socket error, or not sent/unanswered): ${failures.join('; ')}`);
  }
  return lines.join('\n') + '\n';
}

module.exports = { render };
