'use strict';
// The database of a bench run, for run.js, webhook-delivery.js and transaction-cost.js: a new
// database tasks_bench_<random> on the server of `serverUrl`, or a temporary PGlite data
// directory when there is none. `engine` is 'postgresql' or 'pglite', `env` what a server process is started with, `options` what
// openDatabase() takes, `drop()` removes it.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');

function createBenchDatabase(serverUrl) {
  return serverUrl ? createPostgresDatabase(serverUrl) : createPgliteDirectory();
}

async function createPostgresDatabase(serverUrl) {
  const name = `tasks_bench_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    engine: 'postgresql',
    env: { DATABASE_URL: url.toString() },
    options: { databaseUrl: url.toString(), dataDir: '' },
    where: `database ${name} on ${url.host}`,
    async drop() {
      const client = new Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

function createPgliteDirectory() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tasks-bench-'));
  return {
    engine: 'pglite',
    // DATABASE_URL set to nothing: the service reads an empty value as unset.
    env: { DATA_DIR: dir, DATABASE_URL: '' },
    options: { databaseUrl: null, dataDir: dir },
    where: `PGlite directory ${dir}`,
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The bench's own PGlite on a data directory (the floor, the webhook backlog), opened as the
 * service opens it: with the service's list of extensions (dist/, which the bench builds).
 */
async function openPglite(dataDir) {
  const { PGlite } = require('@electric-sql/pglite');
  const { PGLITE_EXTENSIONS } = require(path.join(__dirname, '../dist/database/pglite-extensions.js'));
  return PGlite.create({ dataDir, extensions: PGLITE_EXTENSIONS });
}

module.exports = { createBenchDatabase, openPglite };
