import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SqlSession } from './database-engine';

/** Where `prisma migrate dev` writes the migrations, in the source tree and next to dist/. */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../../prisma/migrations');

/**
 * How a migration of field rules begins (written by `npm run db:migration`: the CHECKs the field
 * tables' kinds require). Like a migration that begins `-- hand-written`, it holds what
 * schema.prisma cannot say (test/migrator.e2e-spec.ts).
 */
export const FIELD_RULES_MARKER = '-- field rules';

// Any fixed number: every instance of the service takes the same lock.
const MIGRATION_LOCK_KEY = 72_707_369;

export interface MigrationResult {
  /** Names of the migrations applied by this call, in order. */
  applied: string[];
  /** True when the database had no migration at all before this call. */
  wasEmpty: boolean;
}

/**
 * Applies pending migrations, recorded in `_prisma_migrations` as Prisma Migrate does. Not
 * `prisma migrate deploy`: it fails through adapter-pg 6.19 on PostgreSQL, and the service must
 * not need the CLI. An advisory lock: instances starting together apply each migration once.
 */
export async function applyMigrations(session: SqlSession, migrationsDir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const migrations = await readMigrations(migrationsDir);
  await session.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await session.exec(CREATE_MIGRATIONS_TABLE);
    const recorded = await session.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
    );
    const byName = new Map(recorded.map((row) => [row.migration_name, row]));
    const applied: string[] = [];
    for (const migration of migrations) {
      const row = byName.get(migration.name);
      if (row?.finished_at) {
        if (row.checksum !== migration.checksum) {
          throw new Error(`Migration ${migration.name} was changed after it was applied (checksum differs)`);
        }
        continue;
      }
      if (row) {
        throw new Error(`Migration ${migration.name} failed earlier and is recorded unfinished: resolve it by hand`);
      }
      await applyOne(session, migration);
      applied.push(migration.name);
    }
    return { applied, wasEmpty: byName.size === 0 };
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
  }
}

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

async function readMigrations(dir: string): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

async function applyOne(session: SqlSession, migration: Migration): Promise<void> {
  await session.exec('BEGIN');
  try {
    const startedAt = new Date();
    await session.exec(migration.sql);
    await session.query(
      `INSERT INTO "_prisma_migrations"
         (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
       VALUES ($1, $2, now(), $3, NULL, NULL, $4, 1)`,
      [randomUUID(), migration.checksum, migration.name, startedAt],
    );
    await session.exec('COMMIT');
  } catch (error) {
    await session.exec('ROLLBACK');
    throw new Error(`Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`);
  }
}

// The table Prisma Migrate creates, column for column.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;
