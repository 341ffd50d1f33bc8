import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

// Apart from test-app.ts (which loads the whole application): the tests that run the service
// as a process of its own need only these.

/** Set per Jest project (jest.config.js): every test file runs on both engines. */
declare const TEST_DATABASE_ENGINE: 'pglite' | 'postgresql';
export const engine = TEST_DATABASE_ENGINE;

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
const POSTGRES_URL = process.env.TEST_POSTGRES_URL || 'postgresql://root@127.0.0.1:5432/test';

export interface TestDatabase {
  /** null for PGlite */
  url: string | null;
  /** Runs one statement on the server with the database's name for `$database` (PostgreSQL). */
  alter(sql: string): Promise<void>;
  drop(): Promise<void>;
}

/**
 * An empty database; `migrated`: on PostgreSQL, a copy of the one the migrator brought up to date
 * at the start of the run (postgres-global-setup.js), which is faster than migrating each.
 * A PGlite database is always empty: the app's start migrates it.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (engine === 'pglite') {
    return { url: null, alter: () => Promise.reject(new Error('PGlite has no server to alter')), drop: async () => undefined };
  }
  const name = `tasks_test_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? process.env.TEST_POSTGRES_TEMPLATE : undefined;
  await withServer((client) => client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`));
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    alter: (sql) => withServer((client) => client.query(sql.replaceAll('$database', name))).then(() => undefined),
    drop: () => withServer((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

async function withServer<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
