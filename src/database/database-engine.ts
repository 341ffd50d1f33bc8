import { parse, PGlite, protocol } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory, Transaction } from '@prisma/driver-adapter-utils';
import { Client, Pool } from 'pg';
import { PGLITE_EXTENSIONS } from './pglite-extensions';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { createHash } from 'node:crypto';
import { holdEmbeddedDatabase } from './embedded-lock';
import type { DriverQuery, DriverResult, DriverTransaction } from './sql';

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
  /** One statement outside a transaction, on the driver (Sql says why). */
  query: DriverQuery;
  /** The same, prepared once per connection: for look-ups by a unique key, not lists, whose plan depends on their filters. */
  preparedQuery: DriverQuery;
  /**
   * Runs `work` in one transaction, committed when it resolves (or with its last statements,
   * DriverTransaction.pipeline); resolves only if it committed. BEGIN goes out with the first
   * statements, so these must only lock and read unless they end the transaction.
   */
  transaction<T>(work: (tx: DriverTransaction) => Promise<T>): Promise<T>;
  /** Calls `onNotify` with every committed NOTIFY on `channel`; `null`: some may have been missed (reconnected). */
  listen(channel: string, onNotify: (payload: string | null) => void): Promise<void>;
  /** Autovacuum's work for PGlite, which has none, until `budgetMs` is spent (embedded-maintenance.ts says why). */
  maintainTables(budgetMs: number): Promise<string[]>;
  /** The connection pool's state (metrics); null on PGlite, which has one in-process connection and no pool. */
  poolStats(): PoolStats | null;
  close(): Promise<void>;
}

/** A statement's prepared name: parsing and planning once per connection was most of a write's database CPU. */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `w_${createHash('sha1').update(text).digest('base64url')}`;
    if (statementNames.size < 10_000) statementNames.set(text, name);
  }
  return name;
}

/**
 * Writes run their prepared statements on the generic plan: left to itself, PostgreSQL planned
 * ChangeLog's statement anew at every write. Writes find rows by key; reads keep the default.
 */
const GENERIC_PLANS = 'SET LOCAL plan_cache_mode = force_generic_plan';
const BEGIN_WRITE = `BEGIN; ${GENERIC_PLANS}`;

/**
 * The tables autovacuum would see to with its default thresholds, most overdue first; growth
 * since pg_class last learned the size too, since PGlite keeps change counts only while it runs.
 */
const OVERDUE_TABLES = `
  WITH due AS (
    SELECT quote_ident(c.relname) AS name,
           coalesce(s.n_dead_tup, 0) / (50 + 0.2 * greatest(c.reltuples, 0)) AS dead,
           greatest(coalesce(s.n_mod_since_analyze, 0) / (50 + 0.1 * greatest(c.reltuples, 0)),
                    pg_relation_size(c.oid) / current_setting('block_size')::int / (c.relpages * 1.2 + 8)) AS changed
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE n.nspname = current_schema() AND c.relkind = 'r')
  SELECT name, dead > 1 AS vacuum, changed > 1 AS analyze
    FROM due
   WHERE dead > 1 OR changed > 1
   ORDER BY greatest(dead, changed) DESC`;

/** Runs `send` with the socket corked: pg writes each statement with a system call of its own; corked, they leave in one. */
function inOneWrite<T>(client: Client, send: () => T): T {
  const socket = client.connection.stream;
  socket.cork();
  try {
    return send();
  } finally {
    socket.uncork();
  }
}

/** How long a lost LISTEN connection waits before it connects again. */
const RELISTEN_DELAY_MS = 1000;

export interface PoolStats {
  /** Open connections, busy or idle. */
  total: number;
  idle: number;
  /** Queries and transactions waiting for a connection. */
  waiting: number;
  max: number;
}

/** Pool size on PostgreSQL, per instance. */
export const POOL_MAX = 10;
/** How long a query waits for a connection (then 503): requests fail fast rather than queue while PostgreSQL is away. */
const POOL_CONNECTION_TIMEOUT_MS = 5_000;
const SESSION_OPTIONS = '-c TimeZone=UTC -c idle_in_transaction_session_timeout=15s -c jit=off';

export async function openDatabase(options: { databaseUrl: string | null; dataDir: string }): Promise<DatabaseEngine> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

function openPostgres(connectionString: string): DatabaseEngine {
  // Session options as startup parameters (a SET on connect would race the first query): UTC,
  // since adapter-pg sends instants without an offset; no lock held for ever by a forgotten
  // transaction; no JIT, which compiled short statements costed high by a guess.
  // pipeline: no query here uses what pg's pipeline mode refuses (`rows`, cursors, query_timeout).
  const pool = new Pool({
    connectionString,
    pipeline: true,
    max: POOL_MAX,
    connectionTimeoutMillis: POOL_CONNECTION_TIMEOUT_MS,
    keepAlive: true,
    options: SESSION_OPTIONS,
  });
  // A dropped idle connection must not crash the process: the pool discards it.
  pool.on('error', () => undefined);
  const listeners: Client[] = [];
  let closed = false;
  // LISTEN holds a connection of its own, not one of the pool's, which serve queries.
  const listen = async (channel: string, onNotify: (payload: string | null) => void, missed = false): Promise<void> => {
    // A retry scheduled before close() may come due after it.
    if (closed) return;
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
    adapter: releasingDeadTransactions(new PrismaPg(pool, { disposeExternalPool: false })),
    async query(text, values) {
      const answer = await pool.query(text, values);
      return { rows: answer.rows, affectedRows: answer.rowCount ?? 0 };
    },
    async preparedQuery(text, values) {
      const answer = await pool.query({ name: statementName(text), text, values });
      return { rows: answer.rows, affectedRows: answer.rowCount ?? 0 };
    },
    async transaction(work) {
      const client = await pool.connect();
      let broken: unknown;
      // A connection lost mid-transaction also reports here: without a listener the process
      // would crash. It is then given up, not returned to the pool.
      const lost = (error: Error) => (broken = error);
      client.on('error', lost);
      const send = async (text: string, values: unknown[]): Promise<DriverResult> => {
        const answer = await client.query({ name: statementName(text), text, values });
        return { rows: answer.rows, affectedRows: answer.rowCount ?? 0 };
      };
      const sendCommit = async () => (await client.query('COMMIT')).command;
      const ending = new TransactionEnd();
      // BEGIN rides with the first statements (no round trip of its own); should it fail, they
      // ran outside a transaction, which is why they only lock and read. A batch that commits waits for it.
      let begin: Promise<unknown> | null = null;
      // Pipelined: after a failed statement the rest fail too, and a COMMIT among them rolls back.
      const pipeline: DriverTransaction['pipeline'] = (statements, { commit }) =>
        ending.whileOpen(async () => {
          if (begin === null && commit) begin = client.query(BEGIN_WRITE);
          if (begin !== null) await begin;
          const first = begin === null ? 1 : 0;
          const sent = inOneWrite(client, () => {
            const batch: Promise<unknown>[] = begin === null ? [(begin = client.query(BEGIN_WRITE))] : [];
            batch.push(...statements.map(({ text, values }) => send(text, values)));
            if (commit) batch.push(ending.commit(sendCommit));
            return batch;
          });
          return (await firstFailure(sent)).slice(first, first + statements.length) as DriverResult[];
        });
      try {
        const result = await work({
          query: async (text, values) => (await pipeline([{ text, values }], { commit: false }))[0],
          pipeline,
        });
        if (begin !== null && !ending.committed) {
          await begin;
          await ending.commit(sendCommit);
        }
        ending.settle();
        return result;
      } catch (error) {
        // A connection that cannot even roll back is given up (after a pipelined COMMIT, ROLLBACK only warns).
        if (begin !== null) await client.query('ROLLBACK').catch((rollbackError: unknown) => (broken = rollbackError));
        throw error;
      } finally {
        client.off('error', lost);
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
    maintainTables: async () => [],
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: POOL_MAX }),
    close: async () => {
      closed = true;
      await Promise.all(listeners.map((client) => client.end().catch(() => undefined)));
      await pool.end();
    },
  };
}

async function openPglite(dataDir: string): Promise<DatabaseEngine> {
  // One process per data directory (embedded-lock.ts): a second one would write what the first never sees.
  const hold = dataDir.startsWith('memory://') ? null : await holdEmbeddedDatabase(dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create({ dataDir, extensions: PGLITE_EXTENSIONS });
  } catch (error) {
    await hold?.release();
    throw error;
  }
  const prepared = new Map<string, number[]>();
  const preparedStatement = preparedOnPglite(db, prepared);
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
    async query(text, values) {
      const answer = await db.query(text, values);
      return { rows: answer.rows, affectedRows: answer.affectedRows ?? 0 };
    },
    // PGlite runs one transaction at a time; other statements wait for it, as query() does.
    preparedQuery: (text, values) => db._runExclusiveTransaction(() => preparedStatement(text, values)),
    // In-process: no round trip to save, so a pipeline's statements simply run in order, then its COMMIT.
    transaction: (work) =>
      db.transaction(async (tx) => {
        await tx.exec(GENERIC_PLANS);
        const ending = new TransactionEnd();
        const result = await work({
          query: (text, values) => ending.whileOpen(() => preparedStatement(text, values)),
          pipeline: (statements, { commit }) =>
            ending.whileOpen(async () => {
              const answers: DriverResult[] = [];
              for (const { text, values } of statements) answers.push(await preparedStatement(text, values));
              // PGlite's own COMMIT, once `work` returns, then finds the transaction over: nothing to do.
              if (commit) await ending.commit(async () => (await tx.exec('COMMIT'))[0]?.command);
              return answers;
            }),
        });
        ending.settle();
        return result;
      }),
    // query() and exec() wait for a transaction under way: a VACUUM cannot run inside one.
    async maintainTables(budgetMs) {
      const started = performance.now();
      // The change counts reach pg_stat_user_tables at most once a second, unless asked.
      await db.exec('SELECT pg_stat_force_next_flush()');
      const due = (await db.query<{ name: string; vacuum: boolean; analyze: boolean }>(OVERDUE_TABLES)).rows;
      const done: string[] = [];
      for (const { name, vacuum, analyze } of due) {
        if (done.length > 0 && performance.now() - started >= budgetMs) break;
        const statement = vacuum ? `VACUUM${analyze ? ' (ANALYZE)' : ''} ${name}` : `ANALYZE ${name}`;
        await db.exec(statement);
        done.push(statement);
      }
      return done;
    },
    poolStats: () => null,
    close: async () => {
      await db.close();
      await hold?.release();
    },
  };
}

/** A transaction's end: once its COMMIT is sent, a further statement fails rather than run outside it. */
class TransactionEnd {
  committed = false;
  /** Why the COMMIT did not commit, once it has been answered. */
  private failure: unknown;

  whileOpen<T>(send: () => Promise<T>): Promise<T> {
    if (this.committed) return Promise.reject(new Error('This transaction has committed: no statement can follow its last ones'));
    return send();
  }

  /** Sends the COMMIT: PostgreSQL answers ROLLBACK to a failed transaction, which must not pass for a commit. */
  async commit(send: () => Promise<string | undefined>): Promise<void> {
    this.committed = true;
    try {
      const command = await send();
      if (command !== 'COMMIT') throw new Error(`The transaction ended with ${command ?? 'no answer'} instead of COMMIT`);
    } catch (error) {
      this.failure = error;
      throw error;
    }
  }

  /** A pipelined COMMIT that did not commit fails the transaction, even if the work caught its batch's error. */
  settle(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}

/** The first error in the order sent: the statements behind a failed one only report the abort. */
async function firstFailure<T>(sent: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}

/**
 * Prepared statements on PGlite, whose query() plans every statement again: planning ChangeLog's
 * statement in WebAssembly cost more than running it. The messages are query()'s, with a name;
 * call it holding PGlite's transaction lock.
 */
function preparedOnPglite(db: PGlite, prepared: Map<string, number[]>): DriverQuery {
  const { serialize } = protocol;
  const send = (message: Uint8Array) => db.execProtocolStream(message, { syncToFs: false });
  return (text, values) =>
    db.runExclusive(async () => {
      const name = statementName(text);
      const messages = [];
      try {
        let types = prepared.get(name);
        if (types === undefined) {
          await send(serialize.parse({ name, text }));
          types = parse.parseDescribeStatementResults(await send(serialize.describe({ type: 'S', name })));
          prepared.set(name, types);
        }
        const params = values.map((value, index) => (value === null || value === undefined ? null : (db.serializers[types[index]] ?? String)(value)));
        messages.push(
          ...(await send(serialize.bind({ statement: name, values: params }))),
          ...(await send(serialize.describe({ type: 'P' }))),
          ...(await send(serialize.execute({}))),
        );
      } finally {
        messages.push(...(await send(serialize.sync())));
      }
      const [answer] = parse.parseResults(messages, db.parsers);
      return { rows: answer.rows, affectedRows: answer.affectedRows ?? 0 };
    });
}

/**
 * adapter-pg, repaired: Prisma 6.19 releases a transaction's connection only after a COMMIT or
 * ROLLBACK that succeeds, so connections that died mid-transaction exhausted the pool.
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
