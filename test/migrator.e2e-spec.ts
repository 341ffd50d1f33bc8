import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseEngine, openDatabase, SqlSession } from '../src/database/database-engine';
import { applyMigrations, FIELD_RULES_MARKER, MIGRATIONS_DIR } from '../src/database/migrator';
import { textSearchHits } from '../src/tasks/finding/text-search';
import { createTestDatabase, engine, TestDatabase } from './support/test-app';

const ROOT = path.resolve(__dirname, '..');

/**
 * The Prisma CLI, offline (prisma.config.ts: WASM engines on PGlite). The CLI does not
 * close the PGlite that its config opens, so it may linger after its answer: with
 * `until`, the answer is taken as soon as its output matches and the process is stopped.
 */
function prismaCli(args: string[], options: { env?: Record<string, string>; until?: RegExp } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/prisma/build/index.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`prisma ${args.join(' ')} timed out:\n${stdout}\n${stderr}`));
    }, 90_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (options.until?.test(stdout)) {
        clearTimeout(timer);
        child.kill();
        resolve(stdout);
      }
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else if (!options.until?.test(stdout)) reject(new Error(`prisma ${args.join(' ')} failed (${code}):\n${stdout}\n${stderr}`));
    });
  });
}

async function migrationNames(dir = MIGRATIONS_DIR): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

async function openFresh(): Promise<{ db: DatabaseEngine; database: TestDatabase; close(): Promise<void> }> {
  const database = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: database.url, dataDir: 'memory://' });
  return { db, database, close: async () => (await db.close(), await database.drop()) };
}

const recorded = (session: SqlSession) =>
  session.query<{ id: string; migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
    'SELECT id, migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
  );

describe('migrator', () => {
  // What Prisma makes of schema.prisma from nothing (its CLI, a process of its own, which lingers
  // after its answer): started at once, so that it runs while the database rules below run here.
  let fromSchema: Promise<string>;
  beforeAll(() => {
    fromSchema = prismaCli(['migrate', 'diff', '--from-empty', '--to-schema-datamodel', 'prisma/schema.prisma', '--script']);
    fromSchema.catch(() => undefined); // awaited (and failing) in its test
  });

  // One database, migrated by the first rule that asks for it: the rules after that one read it
  // or try a changed or failing migration on it, each leaving it as it was (which they check).
  let migrated: { db: DatabaseEngine; close(): Promise<void> } | undefined;
  let firstRun: Promise<{ applied: string[]; wasEmpty: boolean }> | undefined;
  const migratedDatabase = async () => {
    firstRun ??= openFresh().then((fresh) => ((migrated = fresh), fresh.db.withSession((session) => applyMigrations(session))));
    return { result: await firstRun, db: migrated!.db };
  };
  afterAll(() => migrated?.close());

  it('applies every migration in name order and records each in _prisma_migrations as Prisma does', async () => {
    const { result, db } = await migratedDatabase();
    const names = await migrationNames();
    expect(result).toEqual({ applied: names, wasEmpty: true });
    const rows = await db.withSession(recorded);
    expect(rows.map((row) => row.migration_name)).toEqual(names);
    for (const row of rows) {
      const sql = await readFile(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('is idempotent: a second run applies nothing and leaves the records as they were', async () => {
    const { db } = await migratedDatabase();
    const before = await db.withSession(recorded);
    const second = await db.withSession((session) => applyMigrations(session));
    expect(second).toEqual({ applied: [], wasEmpty: false });
    expect(await db.withSession(recorded)).toEqual(before);
  });

  it('refuses to go on when an applied migration was changed afterwards', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    const { db } = await migratedDatabase();
    try {
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      const before = await db.withSession(recorded);
      expect(await db.withSession((session) => applyMigrations(session, dir))).toEqual({ applied: [], wasEmpty: false });
      const [first] = await migrationNames(dir);
      await writeFile(path.join(dir, first, 'migration.sql'), '-- edited\n', { flag: 'a' });
      await expect(db.withSession((session) => applyMigrations(session, dir))).rejects.toThrow(/changed after it was applied/);
      expect(await db.withSession(recorded)).toEqual(before);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rolls back a failing migration entirely and records nothing for it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    const { db } = await migratedDatabase();
    try {
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      expect(await db.withSession((session) => applyMigrations(session, dir))).toEqual({ applied: [], wasEmpty: false });
      await cp(path.join(dir, (await migrationNames(dir))[0]), path.join(dir, '99999999999999_broken'), { recursive: true });
      await writeFile(path.join(dir, '99999999999999_broken', 'migration.sql'), 'CREATE TABLE half_done (id int);\nSELECT no_such_function();\n');
      await expect(db.withSession((session) => applyMigrations(session, dir))).rejects.toThrow(/99999999999999_broken failed/);
      const tables = await db.withSession((session) => session.query("SELECT 1 FROM pg_tables WHERE tablename = 'half_done'"));
      expect(tables).toEqual([]);
      expect((await db.withSession(recorded)).map((row) => row.migration_name)).not.toContain('99999999999999_broken');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // The later migrations rewrite rows (the search document's backfill, then its split): each must
  // run on a database that already holds tasks and comments, not only on an empty one.
  it('applies the migrations after comments on a database holding tasks and comments, which search then finds', async () => {
    const dataFrom = '20261128021746_sprint_closed_window';
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    const fresh = await openFresh();
    try {
      const names = await migrationNames();
      for (const name of names.filter((name) => name < dataFrom))
        await cp(path.join(MIGRATIONS_DIR, name), path.join(dir, name), { recursive: true });
      await fresh.db.withSession((session) => applyMigrations(session, dir));
      const [project, key, paid, other] = ['1', '2', '3', '4'].map((n) => `00000000-0000-4000-8000-00000000000${n}`);
      await fresh.db.withSession(async (session) => {
        await session.query(`INSERT INTO projects (id, name) VALUES ($1, 'Old data')`, [project]);
        await session.query(`INSERT INTO api_keys (id, project_id, name, prefix, secret_hash) VALUES ($1, $2, 'old', 'tsk_old', $3)`, [
          key,
          project,
          'a'.repeat(64),
        ]);
        await session.query(
          `INSERT INTO tasks (id, project_id, title, description, rank) VALUES ($1, $3, 'Pay the invoice', 'By Friday', '1'), ($2, $3, 'Other', NULL, '2')`,
          [paid, other, project],
        );
        await session.query(
          `INSERT INTO comments (project_id, task_id, body, author_key_id, author_name, created_at, updated_at)
           VALUES ($1, $2, 'The receipt is attached', $3, 'old (API)', now(), now())`,
          [project, paid, key],
        );
      });
      const result = await fresh.db.withSession((session) => applyMigrations(session));
      expect(result.applied).toEqual(names.filter((name) => name >= dataFrom));
      for (const [search, found] of [
        ['invoice', [paid]],
        ['friday', [paid]],
        ['receipt', [paid]],
        ['other', [other]],
      ] as const) {
        const hits = textSearchHits(project, search, 10);
        const rows = await fresh.db.withSession((session) => session.query<{ task_id: string }>(hits.text, hits.values));
        expect([search, rows.map((row) => row.task_id)]).toEqual([search, found]);
      }
    } finally {
      await fresh.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Two instances can share a PostgreSQL database; a PGlite database belongs to one process.
  (engine === 'postgresql' ? it : it.skip)('applies each migration once when two instances start together (PostgreSQL)', async () => {
    const database = await createTestDatabase();
    const instances = await Promise.all([1, 2].map(() => openDatabase({ databaseUrl: database.url, dataDir: '' })));
    try {
      const results = await Promise.all(instances.map((db) => db.withSession((session) => applyMigrations(session))));
      const names = await migrationNames();
      expect([...results[0].applied, ...results[1].applied].sort()).toEqual(names);
      expect(results.filter((result) => result.applied.length > 0)).toHaveLength(1);
      expect((await instances[0].withSession(recorded)).map((row) => row.migration_name)).toEqual(names);
    } finally {
      await Promise.all(instances.map((db) => db.close()));
      await database.drop();
    }
  });

  // Its Prisma CLI run takes about 40 s on a loaded machine: past Jest's 60 s, hence 240 s.
  it('builds the schema that prisma/schema.prisma describes, plus the hand-written migrations', async () => {
    // What Prisma makes of schema.prisma from nothing, then every migration of what it cannot say:
    // hand-written ones, and the field rules `npm run db:migration` writes.
    const handWritten: string[] = [];
    for (const name of await migrationNames()) {
      const sql = await readFile(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8');
      if (sql.startsWith('-- hand-written') || sql.startsWith(FIELD_RULES_MARKER)) handWritten.push(sql);
    }
    expect(handWritten.length).toBeGreaterThan(0);
    const expected = await openFresh();
    try {
      const script = await fromSchema;
      await expected.db.withSession(async (session) => {
        await session.exec(script);
        for (const sql of handWritten) await session.exec(sql);
      });
      const { db } = await migratedDatabase();
      const [want, got] = await Promise.all([expected.db.withSession(catalog), db.withSession(catalog)]);
      expect(want.length).toBeGreaterThan(50);
      expect(got).toEqual(want);
    } finally {
      await expected.close();
    }
  }, 240_000);

  (engine === 'pglite' ? it : it.skip)('leaves a migration history that the Prisma CLI reads as its own (PGlite on disk)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pglite-'));
    try {
      const db = await openDatabase({ databaseUrl: null, dataDir: dir });
      await db.withSession((session) => applyMigrations(session));
      await db.close();
      const status = await prismaCli(['migrate', 'status'], {
        env: { PRISMA_PGLITE_DIR: dir },
        until: /up to date|not yet been applied|not found locally|failed/,
      });
      expect(status).toContain('Database schema is up to date');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Tables, columns, indexes, constraints, enums and extensions, as sorted text. */
async function catalog(session: SqlSession): Promise<string[]> {
  const rows = await session.query<{ item: string }>(`
    SELECT 'column ' || table_name || '.' || column_name || ' ' || udt_name || coalesce('(' || character_maximum_length || ')', '')
           || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS item
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
    UNION ALL
    SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
    UNION ALL
    SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> '_prisma_migrations'
    UNION ALL
    SELECT 'enum ' || t.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname
    UNION ALL
    SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL
    SELECT 'function ' || proname || ' ' || md5(prosrc) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
    UNION ALL
    SELECT 'extension ' || extname FROM pg_extension`);
  return rows.map((row) => row.item).sort();
}
