'use strict';
// npm run bench:transactions [-- --transactions=2000]
//
// What a write transaction costs the Node process through each way to the database: Prisma's
// interactive $transaction with $queryRawUnsafe, against the driver's own transaction
// (DatabaseEngine.transaction, which PrismaService.write uses). The same work both ways: the
// statements of a create as bench/floor.js runs them (references, event numbers, task and
// labels, sprint ledger, history + event + outbox + the task's JSON), on a small seeded project. This is the
// measured reason the service's writes go around Prisma (bench/results/log.md, "What each change bought").
//
// One process, one transaction at a time, so the CPU time per transaction is the client's own
// work (on PGlite the database's too, which runs in this process). Run it on each engine:
//   DATABASE_URL=postgresql://root@127.0.0.1:5432/test npm run bench:transactions
//   npm run bench:transactions

const path = require('node:path');
const { randomUUID } = require('node:crypto');
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { floorStatements } = require('./floor');
const { seed } = require('./seed');
const { createBenchDatabase } = require('./databases');

const DIST = path.resolve(__dirname, '..', 'dist');

async function main() {
  const count = Number(process.argv.find((a) => a.startsWith('--transactions='))?.split('=')[1] ?? 2000);
  const { openDatabase } = require(path.join(DIST, 'database/database-engine.js'));
  const { applyMigrations } = require(path.join(DIST, 'database/migrator.js'));
  const { PrismaClient } = require(path.join(DIST, 'generated/prisma/client.js'));
  const database = await createBenchDatabase(process.env.DATABASE_URL);
  const engine = await openDatabase(database.options);
  try {
    const project = await engine.withSession(async (session) => {
      await applyMigrations(session);
      const [first] = await seed(session, { bigTasks: 1000, smallProjects: 0, smallTasks: 0 });
      const [row] = await session.query(
        `SELECT (SELECT id FROM memberships WHERE project_id = $1 LIMIT 1) AS member,
                (SELECT id FROM sprints WHERE project_id = $1 AND status = 'active') AS sprint,
                (SELECT array_agg(id ORDER BY id) FROM (SELECT id FROM labels WHERE project_id = $1 ORDER BY id LIMIT 2) l) AS labels`,
        [first.id],
      );
      return { id: first.id, ...row };
    });
    const prisma = new PrismaClient({ adapter: engine.adapter });
    await prisma.$connect();
    const viaPrisma = (work) => prisma.$transaction((tx) => work((text, values) => tx.$queryRawUnsafe(text, ...values)));
    const viaDriver = (work) => engine.transaction((tx) => work(async (text, values) => (await tx.query(text, values)).rows));
    const results = {};
    // Twice each, alternating, so that neither way is measured only cold.
    for (const [name, run] of [
      ['prisma', viaPrisma],
      ['driver', viaDriver],
      ['prisma', viaPrisma],
      ['driver', viaDriver],
    ]) {
      for (let i = 0; i < 50; i++) await run(createWork(project));
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < count; i++) await run(createWork(project));
      const used = process.cpuUsage(cpu);
      results[name] = { cpuMs: (used.user + used.system) / 1000 / count, wallMs: (performance.now() - started) / count };
    }
    await prisma.$disconnect();
    const kind = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    process.stdout.write(
      `${kind}, ${count} create transactions each way, one at a time (Node ${process.version}, ${os.cpus()[0]?.model}):\n` +
        `| way to the database | process CPU ms per transaction | wall ms per transaction |\n|---|---|---|\n` +
        Object.entries(results)
          .map(
            ([name, r]) =>
              `| ${name === 'prisma' ? "Prisma's $transaction + $queryRawUnsafe" : 'driver (DatabaseEngine.transaction)'} | ${r.cpuMs.toFixed(2)} | ${r.wallMs.toFixed(2)} |`,
          )
          .join('\n') +
        '\n',
    );
  } finally {
    await engine.close();
    await database.drop();
  }
}

/**
 * The statements of one create, in order, as the floor runs them, one at a time (the floor sends
 * the last three with the COMMIT in one round trip: the same statements, which is what is compared
 * here); `query(text, values)` answers rows.
 */
function createWork(project) {
  return async (query) => {
    const id = randomUUID();
    const labels = project.labels;
    await query(floorStatements.REFERENCES_STATEMENT, [project.id, project.member, project.sprint, labels]);
    await query(floorStatements.CLAIM_STATEMENT, [project.id, 1]);
    await query(floorStatements.INSERT_STATEMENT, [
      id,
      project.id,
      'Timed task',
      'A description.',
      'todo',
      'high',
      project.member,
      project.sprint,
      '2027-03-15',
      labels,
      3,
    ]);
    await query(floorStatements.LEDGER_STATEMENT, [project.id, [id]]);
    const records = [{ ord: 1, task_id: id, action: 'created', changes: [{ field: 'title', from: null, to: 'Timed task' }] }];
    await query(floorStatements.RECORD_STATEMENT, [project.id, 'Bench (API)', JSON.stringify(records), [id], 1]);
  };
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
