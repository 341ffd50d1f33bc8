import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { Client, Pool } from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { TransactionQuery } from './sql-transaction';

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
  /** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (query: TransactionQuery) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` with the payload of every NOTIFY on `channel` once its transaction has
   * committed, from any process on the same database. `null` means notifications may have been
   * missed (the listening connection was lost and is back): treat everything as changed.
   * Closed with the engine.
   */
  listen(channel: string, onNotify: (payload: string | null) => void): Promise<void>;
  close(): Promise<void>;
}

/** How long a lost LISTEN connection waits before it connects again. */
const RELISTEN_DELAY_MS = 1000;

export async function openDatabase(options: { databaseUrl: string | null; dataDir: string }): Promise<DatabaseEngine> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

function openPostgres(connectionString: string): DatabaseEngine {
  const pool = new Pool({ connectionString, max: 10 });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // adapter-pg sends instants as text without an offset, which PostgreSQL reads in the
  // session's time zone: every session runs in UTC, whatever the server's default. (pg runs
  // it before anything else the new connection is given.)
  // A transaction left open by a bug must not hold its locks for ever: the server ends it.
  pool.on('connect', (client) => void client.query("SET TIME ZONE 'UTC'; SET idle_in_transaction_session_timeout = '15s'").catch(() => undefined));
  const listeners: Client[] = [];
  let closed = false;
  // LISTEN needs a connection of its own for as long as it listens: not one of the pool's,
  // which serve queries (a held long poll holds no connection at all).
  const listen = async (channel: string, onNotify: (payload: string | null) => void, missed = false): Promise<void> => {
    const client = new Client({ connectionString });
    listeners.push(client);
    let lost = false;
    const relisten = () => {
      if (lost) return;
      lost = true;
      listeners.splice(listeners.indexOf(client), 1);
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      if (!closed) setTimeout(() => void listen(channel, onNotify, true).catch(() => undefined), RELISTEN_DELAY_MS).unref();
    };
    client.on('error', relisten);
    client.on('end', relisten);
    client.on('notification', (message) => onNotify(message.payload ?? ''));
    try {
      await client.connect();
      await client.query(`LISTEN "${channel}"`);
      if (missed) onNotify(null);
    } catch (error) {
      relisten();
      if (!missed) throw error;
    }
  };
  return {
    kind: 'postgresql',
    adapter: new PrismaPg(pool, { disposeExternalPool: false }),
    async transaction(work) {
      const client = await pool.connect();
      let broken: unknown;
      try {
        await client.query('BEGIN');
        const result = await work(async (text, values) => {
          const answer = await client.query(text, values);
          return { rows: answer.rows, affectedRows: answer.rowCount ?? 0 };
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection that cannot even roll back is given up, not handed to the next request.
        await client.query('ROLLBACK').catch((rollbackError: unknown) => (broken = rollbackError));
        throw error;
      } finally {
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
    listen: (channel, onNotify) => listen(channel, onNotify),
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
    close: async () => {
      closed = true;
      await Promise.all(listeners.map((client) => client.end().catch(() => undefined)));
      await pool.end();
    },
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
    listen: async (channel, onNotify) => void (await db.listen(channel, onNotify)),
    // PGlite runs one transaction at a time; other statements wait for it.
    transaction: (work) =>
      db.transaction((tx) =>
        work(async (text, values) => {
          const answer = await tx.query(text, values);
          return { rows: answer.rows, affectedRows: answer.affectedRows ?? 0 };
        }),
      ),
    close: () => db.close(),
  };
}
