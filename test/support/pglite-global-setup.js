// Before the PGlite run: initdb once. Every in-memory PGlite the tests open loads this blank data
// directory instead of running initdb itself (test/support/pglite-blank-image.ts); the migrations
// still run on each, as the service runs them.
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const VARIABLE = 'TEST_PGLITE_BLANK_IMAGE';

module.exports = async function pgliteGlobalSetup() {
  const { PGlite } = require('@electric-sql/pglite');
  const db = await PGlite.create({ dataDir: 'memory://' });
  try {
    // A checkpoint first: the copy then starts as from a clean shutdown, with nothing to replay.
    await db.exec('CHECKPOINT');
    const image = await db.dumpDataDir('none');
    const directory = mkdtempSync(path.join(os.tmpdir(), 'pglite-blank-'));
    const file = path.join(directory, 'pgdata.tar');
    writeFileSync(file, Buffer.from(await image.arrayBuffer()));
    // The test workers start after this and inherit the variable.
    process.env[VARIABLE] = file;
  } finally {
    await db.close();
  }
};

module.exports.teardown = async function pgliteGlobalTeardown() {
  const file = process.env[VARIABLE];
  if (file) rmSync(path.dirname(file), { recursive: true, force: true });
};
