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

/** The targets of the issue, evaluated on this run's numbers. */
function targets(engine, r) {
  const ratio = (svc, floor) => (svc && floor ? svc.rps / floor.rps : NaN);
  const clean = (...results) => results.every((x) => x && x.errors === 0);
  const check = (name, measured, ok, applies, valid) => ({
    name,
    measured,
    result: measured.startsWith('-') ? 'not measured' : !applies ? 'reference only' : !valid ? 'missed (errors)' : ok ? 'met' : 'missed',
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
      `${int(counts.subtasks)} subtasks; seeded in ${num(run.seedSeconds)} s`,
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
  for (const key of ['listDefault', 'listFiltered', 'listDeep', 'detail', 'create', 'patch', 'patchList', 'deleteRestore']) {
    const s = r.service[key];
    const f = r.floor[key];
    if (!s) continue;
    const name = key === 'deleteRestore' || key === 'patchList' ? `${r.names[key]} (${num(s.iterationsPerSecond, 0)} pairs/s)` : r.names[key];
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
    'Pairs: delete + restore is DELETE /api/v1/tasks/{id} then POST /api/v1/trash/{id}/restore; patch + list is PATCH /api/v1/tasks/{id} (new title) then GET /api/v1/tasks, so the list cannot reuse a remembered page or total. req/s and latencies count each request.',
  );
  lines.push('');
  lines.push('## CPU time per request (throughput rows)');
  lines.push('');
  lines.push(
    'From /proc: the server process (Node, and on PGlite the database too, which runs inside it) and, on PostgreSQL, the backends of the bench database. ' +
      'Less sensitive to other work on the machine than requests/s.',
  );
  lines.push('');
  const cpuRows = [];
  for (const key of ['listDefault', 'listFiltered', 'listDeep', 'detail', 'create', 'patch', 'patchList', 'deleteRestore']) {
    const s = r.service[key];
    const f = r.floor[key];
    if (!s) continue;
    const total = (x) => (x && x.serverCpuMs !== null ? x.serverCpuMs + (x.dbCpuMs ?? 0) : NaN);
    cpuRows.push([
      r.names[key],
      num(s.serverCpuMs, 2),
      num(s.dbCpuMs, 2),
      f ? num(f.serverCpuMs, 2) : '',
      f ? num(f.dbCpuMs, 2) : '',
      f ? `${num(total(s) / total(f), 2)} x` : '',
    ]);
  }
  lines.push(table(['row', 'service process ms', 'service db ms', 'floor process ms', 'floor db ms', 'total service/floor'], cpuRows));
  lines.push('');
  lines.push('## Fixed rate (open loop)');
  lines.push('');
  const fixedRow = (who, key, x) => [r.names[key], who, String(x.rate), num(x.achieved), num(x.p50), num(x.p99), num(x.max), String(x.errors)];
  lines.push(
    table(
      ['row', 'server', 'rate/s', 'achieved/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'],
      [
        ...Object.entries(r.fixed).map(([key, x]) => fixedRow('service', key, x)),
        ...Object.entries(r.floorFixed ?? {}).map(([key, x]) => fixedRow('floor', key, x)),
      ],
    ),
  );
  lines.push('');
  lines.push('achieved/s below the rate: the server could not keep up, and latencies grow for as long as the row lasts.');
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
      targets(engine, r).map((t) => [t.name, t.measured, t.result]),
    ),
  );
  const failures = Object.entries(r.service)
    .concat(Object.entries(r.fixed))
    .filter(([, x]) => x && x.errors > 0)
    .map(([key, x]) => `${r.names[key]} (${x.mode}): ${JSON.stringify(x.failures)}`);
  if (failures.length) {
    lines.push('');
    lines.push(`Errors by cause (HTTP status, socket error, or not sent/unanswered): ${failures.join('; ')}`);
  }
  return lines.join('\n') + '\n';
}

module.exports = { render };
