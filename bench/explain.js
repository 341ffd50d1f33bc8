'use strict';
// EXPLAIN ANALYZE of the statements behind the list rows, the service's and the floor's,
// on the seeded data: where the database time of a list request goes.
//
// The service's statement is not copied here: we run the service's own TaskReader (from
// dist/) with a stand-in for Prisma that only records the SQL it is given, so this is
// the exact text and parameters the service sends for the same request.

const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { URLSearchParams } = require('node:url');
const { floorCursors, listRequest } = require('./floor');

const DIST = path.resolve(__dirname, '../dist');

const distModule = (file) => require(path.join(DIST, file));

/**
 * Runs `call` with a stand-in for Prisma and returns the last raw statement it sent. The
 * stand-in answers `answer` (a list page by default: what TaskReader.list reads back).
 */
async function captureServiceSql(call, answer = { tasks: '[]', total: 0, version: '0', next: null }) {
  const { Prisma } = distModule('generated/prisma/client');
  let captured = null;
  const recorder = {
    // A tagged template, or a statement built with Prisma.sql.
    $queryRaw(strings, ...values) {
      captured = strings instanceof Prisma.Sql ? strings : Prisma.sql(strings, ...values);
      return Promise.resolve([answer]);
    },
    // A statement that knows its rows (src/database/sql.ts Statement): text and values.
    rows(statement) {
      captured = statement;
      return Promise.resolve([answer]);
    },
  };
  // The hot reads go through PrismaService.sql and .preparedSql (the driver), the rest through Prisma itself.
  recorder.sql = recorder;
  recorder.preparedSql = recorder;
  await call(recorder);
  if (!captured) throw new Error('the service sent no raw statement');
  return { text: captured.text, values: [...captured.values].map((value) => (value instanceof Date ? value.toISOString() : value)) };
}

/**
 * The query string as the list handler receives it: through the service's own global
 * validation pipe, into a ListTasksQueryDto (so filters arrive in whatever form the
 * service's DTO gives them).
 */
async function listQueryDto(raw) {
  const { createValidationPipe } = distModule('common/validation/validation.pipe.js');
  const { ListTasksQueryDto } = distModule('tasks/task.dto.js');
  return createValidationPipe().transform(raw, { type: 'query', metatype: ListTasksQueryDto, data: '' });
}

/**
 * The service's list statements for a raw query string, in the three states of its
 * TaskListCache (src/tasks/task-list-cache.ts):
 * - `counted`: the page after a change, or the first request: page, joins and count;
 * - `remembered`: another page of a list whose total is known at the current version
 *   (walking pages): page and joins, the count skipped;
 * - `repeated`: a page answered before, nothing changed since: only the version is read.
 */
async function serviceListSql(session, projectId, raw, codec) {
  const { taskListFilter } = distModule('tasks/task-list-filters.js');
  const { TaskReader } = distModule('tasks/task-reader.service.js');
  const { TaskListCache } = distModule('tasks/task-list-cache.js');
  const query = await listQueryDto(raw);
  const [row] = await session.query('SELECT version::text AS version FROM task_list_versions WHERE project_id = $1', [projectId]);
  const answer = { tasks: '[]', total: 0, version: row ? row.version : '0', next: null };
  const read = (cache, pageQuery) => (prisma) =>
    new TaskReader(prisma, codec, cache).list(projectId, taskListFilter(pageQuery), pageQuery.sort ?? 'created', pageQuery);

  const counted = await captureServiceSql(read(new TaskListCache(), query), answer);
  const cache = new TaskListCache();
  await captureServiceSql(read(cache, { ...query, limit: (query.limit ?? 50) + 1 }), answer); // the same list, another page
  const remembered = await captureServiceSql(read(cache, query), answer);
  const repeated = await captureServiceSql(read(cache, query), answer);
  return { counted, remembered, repeated };
}

async function serviceDetailSql(projectId, taskId, codec) {
  const { TaskReader } = distModule('tasks/task-reader.service.js');
  const { TaskListCache } = distModule('tasks/task-list-cache.js');
  return captureServiceSql((prisma) => new TaskReader(prisma, codec, new TaskListCache()).detail(projectId, taskId), { task: null });
}

/**
 * The statements of the sprint reports (issue 26) of `sprintId`, as SprintReportsService sends
 * them (its last statement: the first reads the sprint, which the stand-in answers as active).
 */
async function serviceReportSql(projectId, sprintId) {
  const { SprintReportsService } = distModule('sprints/sprint-reports.service.js');
  const caller = { projectId };
  const answer = { status: 'active', report: null, burndown: '{}', velocity: '{}' };
  const reports = (prisma) => new SprintReportsService(prisma);
  return {
    report: await captureServiceSql((prisma) => reports(prisma).report(caller, sprintId), answer),
    burndown: await captureServiceSql((prisma) => reports(prisma).burndown(caller, sprintId), answer),
    velocity: await captureServiceSql((prisma) => reports(prisma).velocity(caller, {}), answer),
  };
}

async function timeStatement(session, statement, runs) {
  for (let i = 0; i < 3; i++) await session.query(statement.text, statement.values);
  const started = performance.now();
  for (let i = 0; i < runs; i++) await session.query(statement.text, statement.values);
  return (performance.now() - started) / runs;
}

/**
 * For each list row: the service's statement and the floor's, each timed over `runs`
 * executions from this process (round trip included) and explained once. Returns a
 * summary for the report and the full plans for the explain file.
 */
async function explainLists(session, { big, fixtures, codec, runs }) {
  const rows = [
    { name: 'list, default page', raw: {} },
    {
      name: 'list, status + assigneeId + q',
      raw: { status: 'todo,in_progress', assigneeId: fixtures.assigneeId, q: fixtures.searchWord },
    },
    { name: `list, page ${fixtures.deepPage} by cursor`, raw: { limit: '50', cursor: fixtures.deepCursor } },
    // The backlog order: the service's statements only (the floor lists in creation order).
    { name: 'list, sort=rank default page', raw: { sort: 'rank' }, floor: false },
    {
      name: `list, sort=rank page ${fixtures.deepPage} by cursor`,
      raw: { sort: 'rank', limit: '50', cursor: fixtures.rankDeepCursor },
      floor: false,
    },
  ];
  const summary = [];
  const plans = [];
  const explain = async (title, statement) => {
    const plan = await session.query(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.values);
    plans.push(
      `=== ${title} ===\n${statement.text}\n-- parameters: ${JSON.stringify(statement.values)}\n\n${plan.map((line) => line['QUERY PLAN']).join('\n')}`,
    );
  };
  // The service's statements are rebuilt from its code in dist/: if that code changed shape,
  // say so in the report rather than stop the run.
  const service = async (build) => {
    try {
      return await build();
    } catch (error) {
      plans.push(`(could not rebuild the service's statement: ${error.message})`);
      return null;
    }
  };
  for (const row of rows) {
    const entry = { name: row.name, serviceRepeated: null, service: null, serviceCounted: null, floor: null };
    const floor = row.floor === false ? null : listRequest(new URLSearchParams(row.raw), big.id, floorCursors(codec).decode);
    const serviceStatements = await service(() => serviceListSql(session, big.id, { ...row.raw }, codec));
    const statements = [
      ['serviceRepeated', 'service statement, page remembered (nothing changed since)', serviceStatements?.repeated],
      ['service', 'service statement, total remembered (another page of the same list)', serviceStatements?.remembered],
      ['serviceCounted', 'service statement, total counted (first request after a change)', serviceStatements?.counted],
      ['floor', 'floor statement', floor],
    ];
    for (const [who, title, statement] of statements) {
      if (!statement) continue;
      entry[who] = await timeStatement(session, statement, runs);
      await explain(`${row.name}: ${title}`, statement);
    }
    summary.push(entry);
  }
  const detail = await service(() => serviceDetailSql(big.id, fixtures.withDependencies[0], codec));
  if (detail) {
    summary.push({ name: 'detail, task with dependencies', service: await timeStatement(session, detail, runs), floor: null });
    await explain('detail: service statement', detail);
  }
  const sprint = fixtures.activeSprint;
  const reports = await service(() => serviceReportSql(big.id, sprint.id));
  for (const [key, name] of [
    ['report', `sprint report (${sprint.scope} tasks, ${sprint.ledgerRows} ledger rows)`],
    ['burndown', 'sprint burndown, the same sprint'],
    ['velocity', 'velocity, last 6 closed sprints'],
  ]) {
    if (!reports) break;
    // Fewer runs: a report costs tens of milliseconds.
    summary.push({ name, service: await timeStatement(session, reports[key], Math.min(runs, 10)), floor: null });
    await explain(`${name}: service statement`, reports[key]);
  }
  return { summary, plans: plans.join('\n\n') };
}

module.exports = { explainLists };
