// `npm run db:migration -- <what_changed> [--from <schema or revision>]` (docs/extending.md):
// Prisma's migration of a schema.prisma edit and the CHECKs the field tables' kinds require,
// both tried on an in-memory PGlite before anything is written, so that no server is needed.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fieldRuleDifferences } from '../common/fields/field-rules';
import { FIELD_TABLES } from '../field-tables';
import { openDatabase, SqlSession } from './database-engine';
import { applyMigrations, FIELD_RULES_MARKER, MIGRATIONS_DIR } from './migrator';

const ROOT = path.resolve(MIGRATIONS_DIR, '../..');
const SCHEMA = path.join(ROOT, 'prisma', 'schema.prisma');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const fromIndex = args.indexOf('--from');
  const from = fromIndex >= 0 ? args.splice(fromIndex, 2)[1] : 'HEAD';
  const [name] = args;
  if (!name || !/^[a-z][a-z0-9_]*$/.test(name) || args.length !== 1) {
    throw new Error('Usage: npm run db:migration -- <what_changed, in snake_case> [--from <schema file or git revision>]');
  }

  const prismaSql = await prismaDiff(schemaBefore(from));
  const engine = await openDatabase({ databaseUrl: null, dataDir: 'memory://' });
  let rulesSql: string[] = [];
  try {
    await engine.withSession(async (session) => {
      await applyMigrations(session);
      if (prismaSql)
        await applyOrExplain(
          session,
          prismaSql,
          'Prisma’s SQL for the schema edit does not apply on top of the migrations (is it in one already? then use --from)',
        );
      const differences = await fieldRuleDifferences(session, FIELD_TABLES);
      const unfixable = differences.filter((difference) => !difference.fix);
      if (unfixable.length) {
        throw new Error(
          `Fix these first, then run this again; nothing was written:\n  ${unfixable.map((difference) => difference.problem).join('\n  ')}`,
        );
      }
      rulesSql = differences.map((difference) => difference.fix!);
      if (rulesSql.length) {
        await applyOrExplain(session, rulesSql.join('\n'), 'The field rules do not apply (a row already in the database breaks them?)');
        const left = await fieldRuleDifferences(session, FIELD_TABLES);
        if (left.length) throw new Error(`Still different after the rules:\n  ${left.map((difference) => difference.problem).join('\n  ')}`);
      }
    });
  } finally {
    await engine.close();
  }

  if (!prismaSql && rulesSql.length === 0) {
    console.log('The migrations already hold schema.prisma and the field tables: nothing to write.');
    return;
  }
  let time = nextMigrationTime();
  if (prismaSql) {
    write(`${time}_${name}`, prismaSql);
    time = addMinute(time);
  }
  if (rulesSql.length) {
    write(
      `${time}_${name}_rules`,
      `${FIELD_RULES_MARKER}: what the kinds of the field tables require of the database (src/common/fields/field-rules.ts),\n` +
        `-- written by npm run db:migration.\n${rulesSql.join('\n')}\n`,
    );
  }
}

/** prisma/schema.prisma as it was before the edit: a file, or its text at a git revision. */
function schemaBefore(from: string): string {
  if (existsSync(from)) return readFileSync(from, 'utf8');
  return execFileSync('git', ['show', `${from}:prisma/schema.prisma`], { cwd: ROOT, encoding: 'utf8' });
}

/** Prisma's SQL from `before` to prisma/schema.prisma; empty when they describe the same schema. */
async function prismaDiff(before: string): Promise<string> {
  const directory = mkdtempSync(path.join(tmpdir(), 'schema-before-'));
  try {
    const file = path.join(directory, 'schema.prisma');
    writeFileSync(file, before);
    const sql = await prismaCli(['migrate', 'diff', '--from-schema-datamodel', file, '--to-schema-datamodel', SCHEMA, '--script']);
    return /^\s*(-- This is an empty migration\.)?\s*$/.test(sql) ? '' : sql;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The Prisma CLI, offline (prisma.config.ts); its standard output. */
function prismaCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/prisma/build/index.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`prisma ${args.join(' ')} failed (${code}):\n${stderr}`))));
  });
}

async function applyOrExplain(session: SqlSession, sql: string, explanation: string): Promise<void> {
  await session.exec('BEGIN');
  try {
    await session.exec(sql);
    await session.exec('COMMIT');
  } catch (error) {
    await session.exec('ROLLBACK');
    throw new Error(`${explanation}: ${(error as Error).message}\n${sql}`);
  }
}

/** A migration time (yyyymmddhhmmss, UTC) after now and after every existing migration's. */
function nextMigrationTime(): string {
  const now = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const last = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name.slice(0, 14))
    .sort()
    .at(-1);
  return last && last >= now ? addMinute(last) : now;
}

function addMinute(time: string): string {
  const [, y, mo, d, h, mi, s] = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(time)!;
  const next = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi + 1, +s));
  return next.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

function write(directoryName: string, sql: string): void {
  const directory = path.join(MIGRATIONS_DIR, directoryName);
  mkdirSync(directory);
  writeFileSync(path.join(directory, 'migration.sql'), sql);
  console.log(`Wrote ${path.relative(process.cwd(), path.join(directory, 'migration.sql'))}`);
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
