// Before the PostgreSQL run: make sure a server answers, and say so loudly when none does. Then
// one database migrated by the service's own migrator, the template of every test app's database
// (test-database.ts): copying it is faster than migrating each (docs/testing.md, "Run time").
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { Client } = require('pg');
const { buildIfStale } = require('../../scripts/build-if-stale');

const TEMPLATE_VARIABLE = 'TEST_POSTGRES_TEMPLATE';
const serverUrl = () => process.env.TEST_POSTGRES_URL || 'postgresql://root@127.0.0.1:5432/test';

module.exports = async function postgresGlobalSetup() {
  const url = serverUrl();
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(
      `The PostgreSQL tests need a server at ${url} (set TEST_POSTGRES_URL to another one): ${error.message}. ` +
        'Run only the embedded-database tests with: npm run test:e2e -- --selectProjects pglite',
    );
  }
  try {
    const name = `tasks_test_template_${randomBytes(6).toString('hex')}`;
    await client.query(`CREATE DATABASE ${name}`);
    // The built migrator (dist/, built here when stale, as the global setup would after this).
    buildIfStale();
    const dist = path.join(__dirname, '..', '..', 'dist', 'database');
    const { openDatabase } = require(path.join(dist, 'database-engine.js'));
    const { applyMigrations } = require(path.join(dist, 'migrator.js'));
    const templateUrl = new URL(url);
    templateUrl.pathname = `/${name}`;
    const engine = await openDatabase({ databaseUrl: templateUrl.toString(), dataDir: '' });
    try {
      await engine.withSession((session) => applyMigrations(session));
    } finally {
      await engine.close();
    }
    // The test workers start after this and inherit the variable.
    process.env[TEMPLATE_VARIABLE] = name;
  } finally {
    await client.end().catch(() => undefined);
  }
};

module.exports.teardown = async function postgresGlobalTeardown() {
  const name = process.env[TEMPLATE_VARIABLE];
  if (!name) return;
  const client = new Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
};
