'use strict';
// npm run bench:ab -- sides=old,new old=<tree>@<database> new=<tree>@<database> [rows=create,patch] [rounds=5] [duration=6] [together=1] [rows-from=side]
//
// Two or more builds of the service on one machine, measured in turns: CPU per request of the
// service process and of its PostgreSQL backends, as run.js measures it. On a shared machine a
// row's CPU per request moves by 10 % or more from one minute to the next, so comparing two full
// runs made one after the other says little; here every round measures each side once, the
// order rotating (or, with together=1, all sides at once), and the report gives each side's
// median over the rounds.
//
// A side is a tree (a checkout with node_modules and dist/, e.g. a `git worktree` of an older
// commit) and a database its own bench seeded (`node bench/run.js --seed-only` in that tree,
// with DATABASE_URL set, prints the name). Every side is measured with this tree's rows
// (scenarios.js) and fixtures, so that the sides get the same requests and a row added since an
// older commit (the sprint close) runs against it too; with rows-from=side, each side's own
// tree's, for rows whose requests changed since. Rows write: seed a database per side, again for
// each comparison. `<side>=<tree>@<database>@NAME:value;...` adds environment variables to that
// side's service.

const path = require('node:path');
const { Client } = require('pg');
const { throughput } = require('./load');
const { startServer, stopAll } = require('./processes');
const { cpuMeter } = require('./cpu');
const { randomBytes } = require('node:crypto');
const { newApiKey } = require('./seed');

const WARMUP_SECONDS = 2;

function parseArgs(argv) {
  const values = Object.fromEntries(argv.map((arg) => arg.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
  const server = new URL(process.env.DATABASE_URL ?? 'postgresql://root@127.0.0.1:5432/test');
  const sides = (values.sides ?? '').split(',').filter(Boolean);
  if (sides.length < 2) throw new Error('sides=<a>,<b>[,...] and <a>=<tree>@<database> for each (see bench/ab.js)');
  return {
    rows: (values.rows ?? 'create,patch,deleteRestore,listDefault').split(','),
    rounds: Number(values.rounds ?? 5),
    together: values.together === '1',
    rowsFromSide: values['rows-from'] === 'side',
    duration: Number(values.duration ?? 6),
    connections: Number(values.connections ?? 32),
    sides: sides.map((name) => {
      if (!values[name]) throw new Error(`side ${name}: ${name}=<tree>@<database> is missing`);
      const [tree, database, env = ''] = values[name].split('@');
      const url = new URL(server);
      url.pathname = `/${database}`;
      return {
        name,
        tree: path.resolve(tree),
        databaseUrl: url.toString(),
        env: Object.fromEntries(
          env
            .split(';')
            .filter(Boolean)
            .map((pair) => pair.split(/:(.*)/s).slice(0, 2)),
        ),
      };
    }),
  };
}

/** A new key for each of the seeded projects the rows use (the seed prints only the big one's), and the rows. */
async function prepareSide(side, { connections, rowsFromSide }) {
  const client = new Client({ connectionString: side.databaseUrl });
  await client.connect();
  try {
    const session = { query: async (sql, params) => (await client.query(sql, params)).rows };
    // The seed's projects: the big one first, then the small ones (writer, hooked), by id as seed.js makes them.
    const projects = await session.query(
      `SELECT p.id::text AS id FROM projects p ORDER BY (SELECT count(*) FROM tasks t WHERE t.project_id = p.id) DESC, p.id LIMIT 3`,
    );
    // The close row's project: the last small one, which no other row writes to (by name: the
    // tasks the row adds to it would move it in the order by size).
    const [closer] = await session.query(`SELECT id::text AS id FROM projects WHERE name = 'Bench project 9'`);
    // With the permissions of the key the side's own seed gave the project (an older tree knows fewer).
    const withKey = async ({ id }) => {
      const key = newApiKey();
      await client.query(
        `INSERT INTO api_keys (project_id, name, prefix, secret_hash, permissions, created_at)
         SELECT $1::uuid, 'Bench A/B key', $2, $3, permissions, now() FROM api_keys WHERE project_id = $1::uuid ORDER BY created_at LIMIT 1`,
        [id, key.prefix, key.secretHash],
      );
      return { id, key: key.secret };
    };
    const [big, writer, hooked] = [await withKey(projects[0]), await withKey(projects[1]), await withKey(projects[2])];
    const closerKey = closer ? (await withKey(closer)).key : undefined;
    const tree = rowsFromSide ? side.tree : path.resolve(__dirname, '..');
    const { readFixtures } = require(path.join(tree, 'bench/fixtures.js'));
    const { scenarios } = require(path.join(tree, 'bench/scenarios.js'));
    // Page 1000, not run.js's 2000: earlier A/B runs may have left tasks in the trash.
    const fixtures = await readFixtures(session, { big, writer, hooked, deepPage: 1000 });
    return scenarios({
      bigKey: big.key,
      writerKey: writer.key,
      hookedKey: hooked.key,
      closerKey,
      adminToken: side.adminToken,
      fixtures,
      connections,
    });
  } finally {
    await client.end();
  }
}

/** One row on `sides` at once (warm-up, then measured): each side's CPU per request and req/s. */
async function measure(sides, row, args) {
  const runAll = (duration) =>
    Promise.all(
      sides.map((side) => {
        const scenario = side.rows[row];
        if (!scenario) throw new Error(`side ${side.name} has no row ${row}`);
        return throughput(side.server.url, scenario, { connections: scenario.connections ?? args.connections, duration });
      }),
    );
  // A row's own house-keeping between runs (the close row: a close cut off before its activation).
  const settle = () => Promise.all(sides.map((side) => side.rows[row]?.settle?.(side.server.url)));
  await settle();
  await runAll(WARMUP_SECONDS);
  await settle();
  const marks = await Promise.all(sides.map((side) => side.meter.start()));
  const results = await runAll(args.duration);
  const cpus = await Promise.all(sides.map((side, i) => side.meter.since(marks[i])));
  return results.map((result, i) => ({
    rps: result.rps,
    server: cpus[i].serverMs / result.requests,
    db: cpus[i].dbMs / result.requests,
    errors: result.errors,
  }));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const log = (message) => process.stderr.write(`[ab ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const measured = new Map();
  try {
    for (const side of args.sides) {
      // The admin interface activates and closes sprints (the close row).
      side.adminToken = randomBytes(16).toString('hex');
      side.rows = await prepareSide(side, args);
      side.server = await startServer(side.name, [path.join(side.tree, 'dist/main.js')], {
        DATABASE_URL: side.databaseUrl,
        // As run.js starts the service: no 429 under the load.
        RATE_LIMIT_PER_MINUTE: '10000000',
        ADMIN_TOKEN: side.adminToken,
        ...side.env,
      });
      side.meter = await cpuMeter(side.server.pid, side.databaseUrl);
      // What a row needs from its server first (the close row: its sprints), as run.js does.
      for (const row of args.rows) {
        const scenario = side.rows[row];
        if (scenario?.prepare) {
          log(`${side.name}: preparing ${row}`);
          await scenario.prepare(side.server.url);
        }
      }
    }
    for (let round = 0; round < args.rounds; round++) {
      for (const row of args.rows) {
        // In turns, the order rotating; or (together=1) all sides at once, under the same load
        // from the rest of the machine.
        const order = args.sides.map((_, i) => args.sides[(i + round) % args.sides.length]);
        const batches = args.together ? [order] : order.map((side) => [side]);
        for (const batch of batches) {
          const samples = await measure(batch, row, args);
          batch.forEach((side, i) => {
            const sample = samples[i];
            log(`round ${round + 1}, ${row}, ${side.name}: ${(sample.server + sample.db).toFixed(2)} ms, ${sample.rps.toFixed(0)}/s`);
            const key = `${row}\n${side.name}`;
            measured.set(key, [...(measured.get(key) ?? []), sample]);
          });
        }
      }
    }
  } finally {
    for (const side of args.sides) await side.meter?.close();
    await stopAll();
  }
  const [first] = args.sides;
  console.log(
    `Medians over ${args.rounds} rounds of ${args.duration} s${args.together ? ' (the sides at once)' : ''}: CPU ms per request (service + database), req/s, and the median of the rounds' ratios of the CPU to ${first.name}'s.\n`,
  );
  console.log(`| row | ${args.sides.map((side) => side.name).join(' | ')} |`);
  console.log(`|---|${args.sides.map(() => '---').join('|')}|`);
  for (const row of args.rows) {
    // The ratio in each round (the sides measured within a minute of each other), then its median:
    // the machine's drift over the run cancels out.
    const totals = (side) => measured.get(`${row}\n${side.name}`).map((s) => s.server + s.db);
    const ratioTo = (side) => median(totals(side).map((total, round) => total / totals(first)[round]));
    const cells = args.sides.map((side) => {
      const samples = measured.get(`${row}\n${side.name}`);
      const errors = samples.reduce((sum, s) => sum + s.errors, 0);
      return (
        `${median(samples.map((s) => s.server)).toFixed(2)} + ${median(samples.map((s) => s.db)).toFixed(2)} ms, ` +
        `${median(samples.map((s) => s.rps)).toFixed(0)}/s, x${ratioTo(side).toFixed(2)}${errors ? `, ${errors} errors` : ''}`
      );
    });
    console.log(`| ${row} | ${cells.join(' | ')} |`);
  }
}

main().catch(async (error) => {
  await stopAll();
  console.error(error);
  process.exit(1);
});
