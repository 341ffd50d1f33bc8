// Before the PostgreSQL run: make sure a server answers, and say so loudly when none does.
const { Client } = require('pg');

module.exports = async function postgresGlobalSetup() {
  const url = process.env.TEST_POSTGRES_URL || 'postgresql://root@127.0.0.1:5432/test';
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(
      `The PostgreSQL tests need a server at ${url} (set TEST_POSTGRES_URL to another one): ${error.message}. ` +
        'Run only the embedded-database tests with: npm run test:e2e -- --selectProjects pglite',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
};
