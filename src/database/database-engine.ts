import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
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
  close(): Promise<void>;
}

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
  pool.on('connect', (client) => void client.query("SET TIME ZONE 'UTC'").catch(() => undefined));
  return {
    kind: 'postgresql',
    adapter: new PrismaPg(pool, { disposeExternalPool: false }),
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
    close: () => db.close(),
  };
}
