import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory, Transaction } from '@prisma/driver-adapter-utils';
import { Pool } from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';

/** One connection's worth of raw SQL, used where a session matters (the migrator's advisory lock). */
export interface SqlSession {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements. */
  exec(sql: string): Promise<void>;
}

/**
 * The database the service runs on: real PostgreSQL when DATABASE_URL is set, embedded
 * PGlite otherwise. Prisma talks to either through its driver adapter; the migrator
 * and the demo seed use a raw session.
 */
export interface DatabaseEngine {
  readonly kind: 'postgresql' | 'pglite';
  readonly adapter: SqlMigrationAwareDriverAdapterFactory;
  withSession<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** The connection pool's state (metrics); null on PGlite, which has one in-process connection and no pool. */
  poolStats(): PoolStats | null;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Open connections, busy or idle. */
  total: number;
  idle: number;
  /** Queries and transactions waiting for a connection. */
  waiting: number;
  max: number;
}

/** Pool size on PostgreSQL, per instance. */
const POOL_MAX = 10;
/**
 * How long a query waits for a connection before it fails (answered 503 database_unavailable):
 * while PostgreSQL is unreachable requests fail fast instead of queueing for ever.
 */
const POOL_CONNECTION_TIMEOUT_MS = 5_000;

export async function openDatabase(options: { databaseUrl: string | null; dataDir: string }): Promise<DatabaseEngine> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

function openPostgres(connectionString: string): DatabaseEngine {
  // keepAlive: a connection to a database host that vanished is noticed by TCP, not left hanging.
  const pool = new Pool({ connectionString, max: POOL_MAX, connectionTimeoutMillis: POOL_CONNECTION_TIMEOUT_MS, keepAlive: true });
  // A dropped idle connection (the database restarted, an administrator terminated it) must
  // not crash the process: the pool discards it and opens a new one when next asked.
  pool.on('error', () => undefined);
  // adapter-pg sends instants as text without an offset, which PostgreSQL reads in the
  // session's time zone: every session runs in UTC, whatever the server's default. (pg runs
  // it before anything else the new connection is given.)
  pool.on('connect', (client) => void client.query("SET TIME ZONE 'UTC'").catch(() => undefined));
  return {
    kind: 'postgresql',
    adapter: releasingDeadTransactions(new PrismaPg(pool, { disposeExternalPool: false })),
    async withSession(work) {
      const client = await pool.connect();
      try {
        return await work({
          query: async (sql, params) => (await client.query(sql, params)).rows,
          exec: async (sql) => void (await client.query(sql)),
        });
      } finally {
        client.release();
      }
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: POOL_MAX }),
    close: () => pool.end(),
  };
}

async function openPglite(dataDir: string): Promise<DatabaseEngine> {
  const db = await PGlite.create({ dataDir, extensions: { pg_trgm } });
  return {
    kind: 'pglite',
    adapter: new PrismaPGlite(db),
    // PGlite has a single connection: every session is that one.
    withSession: (work) =>
      work({
        query: async <T>(sql: string, params?: unknown[]) => (await db.query<T>(sql, params)).rows,
        exec: async (sql) => void (await db.exec(sql)),
      }),
    poolStats: () => null,
    close: () => db.close(),
  };
}

/**
 * adapter-pg with one repair. Prisma 6.19 hands a transaction's connection back to the pool
 * only after its COMMIT or ROLLBACK statement succeeds. When the connection died under the
 * transaction (the database restarted, an administrator terminated the backend), that
 * statement fails and the connection stays checked out for ever: after ten of those the
 * pool is exhausted and every request times out until a restart (measured: a few rounds of
 * pg_terminate_backend under load were enough). Here a failed COMMIT or ROLLBACK releases the
 * connection, and pg-pool discards it as broken.
 */
function releasingDeadTransactions(factory: SqlMigrationAwareDriverAdapterFactory): SqlMigrationAwareDriverAdapterFactory {
  const wrapTransaction = (transaction: Transaction): Transaction =>
    withOverride(transaction, 'executeRaw', async (query) => {
      try {
        return await transaction.executeRaw(query);
      } catch (error) {
        if (query.sql === 'COMMIT' || query.sql === 'ROLLBACK') await transaction.rollback().catch(() => undefined);
        throw error;
      }
    });
  const wrapAdapter = (adapter: SqlDriverAdapter): SqlDriverAdapter =>
    withOverride(adapter, 'startTransaction', async (isolationLevel) => wrapTransaction(await adapter.startTransaction(isolationLevel)));
  return withOverride(
    withOverride(factory, 'connect', async () => wrapAdapter(await factory.connect())),
    'connectToShadowDb',
    async () => wrapAdapter(await factory.connectToShadowDb()),
  );
}

/** `target` with one method replaced; every other member is the target's own (methods bound to it). */
function withOverride<T extends object, K extends keyof T>(target: T, name: K, replacement: T[K]): T {
  return new Proxy(target, {
    get(object, property) {
      if (property === name) return replacement;
      const value = Reflect.get(object, property, object) as unknown;
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}
