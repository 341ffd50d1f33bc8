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
const { listRequest } = require('./floor');

const DIST = path.resolve(__dirname, '../dist');

const distModule = (file) => require(path.join(DIST, file));

/** Runs `call` with a stand-in for Prisma and returns the one raw statement it sent. */
async function captureServiceSql(call) {
  const { Prisma } = distModule('generated/prisma/client');
  let captured = null;
  const recorder = {
    $queryRaw(strings, ...values) {
      captured = Prisma.sql(strings, ...values);
      return Promise.resolve([{ total: 0, tasks: [] }]);
    },
  };
  await call(recorder);
  if (!captured) throw new Error('the service sent no raw statement');
  return { text: captured.text, values: captured.values.map((value) => (value instanceof Date ? value.toISOString() : value)) };
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

/** The service's list statement for a raw query string. */
async function serviceListSql(projectId, raw, codec) {
  const { taskListConditions } = distModule('tasks/task-list-filters.js');
  const { TaskReader } = distModule('tasks/task-reader.service.js');
  const query = await listQueryDto(raw);
  const where = taskListConditions(projectId, query);
  return captureServiceSql(async (prisma) => {
    const reader = new TaskReader(prisma, codec);
    // TaskReader.list(where, order, query) pages by itself; an older TaskReader had only page().
    if (typeof reader.list === 'function') return reader.list(where, 'created', query);
    const limit = query.limit ?? 50;
    const after = query.cursor ? codec.decode('tasks', query.cursor) : null;
    return reader.page({ where, order: 'created', after, take: limit + 1 });
  });
}

async function serviceDetailSql(projectId, taskId, codec) {
  const { TaskReader } = distModule('tasks/task-reader.service.js');
  return captureServiceSql((prisma) => new TaskReader(prisma, codec).detail(projectId, taskId));
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
  ];
  const summary = [];
  const plans = [];
  const explain = async (title, statement) => {
    const plan = await session.query(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.values);
    plans.push(`=== ${title} ===\n${statement.text}\n-- parameters: ${JSON.stringify(statement.values)}\n\n${plan.map((line) => line['QUERY PLAN']).join('\n')}`);
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
    const entry = { name: row.name, service: null, floor: null };
    const floor = listRequest(new URLSearchParams(row.raw), big.id, (cursor) => {
      const position = codec.decode('tasks', cursor);
      return { at: position.at.toISOString(), id: position.id };
    });
    const serviceStatement = await service(() => serviceListSql(big.id, { ...row.raw }, codec));
    for (const [who, statement] of [['service', serviceStatement], ['floor', floor]]) {
      if (!statement) continue;
      entry[who] = await timeStatement(session, statement, runs);
      await explain(`${row.name}: ${who} statement`, statement);
    }
    summary.push(entry);
  }
  const detail = await service(() => serviceDetailSql(big.id, fixtures.withDependencies[0], codec));
  if (detail) {
    summary.push({ name: 'detail, task with dependencies', service: await timeStatement(session, detail, runs), floor: null });
    await explain('detail: service statement', detail);
  }
  return { summary, plans: plans.join('\n\n') };
}

module.exports = { explainLists };
