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
  /**
   * The same, prepared once per connection under its name (statementName) and then only bound
   * and executed. For the statements every request runs whose plan cannot depend on their values
   * (a look-up by a unique key): not for lists, whose plan depends on their filters.
   */
  preparedQuery: DriverQuery;
  /**
   * Runs `work` in one transaction on one connection: committed when it resolves, rolled back
   * when it throws. Unless its last statements were sent with the COMMIT
   * (DriverTransaction.pipeline): the transaction then ends with them, committed or not, and
   * `work` sends nothing after them. Resolves only if the transaction committed. On PostgreSQL,
   * BEGIN goes out with the first statements, which must only lock and read unless they end the
   * transaction; a `work` that sends none opens no transaction there.
   */
  transaction<T>(work: (tx: DriverTransaction) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` with the payload of every NOTIFY on `channel` once its transaction has
   * committed, from any process on the same database. `null` means notifications may have been
   * missed (the listening connection was lost and is back): treat everything as changed.
   * Closed with the engine.
   */
  listen(channel: string, onNotify: (payload: string | null) => void): Promise<void>;
  /**
   * What autovacuum does on PostgreSQL, for PGlite, which has none: VACUUM and ANALYZE of the
   * tables past autovacuum's thresholds (OVERDUE_TABLES), the most overdue first, one statement
   * after another until `budgetMs` is spent (at least one). Answers the statements run; none on
   * PostgreSQL, whose autovacuum keeps the tables (src/database/embedded-maintenance.ts says why
   * it matters).
   */
  maintainTables(budgetMs: number): Promise<string[]>;
  /** The connection pool's state (metrics); null on PGlite, which has one in-process connection and no pool. */
  poolStats(): PoolStats | null;
  close(): Promise<void>;
}

/**
 * The name a statement is prepared under on each connection (the writes', and the hot reads of
 * DatabaseEngine.preparedQuery): PostgreSQL parses and plans it once per connection instead of
 * on every request, which was most of a write's database CPU (ChangeLog's statement builds JSON
 * in several CTEs) and two thirds of the key look-up's. The texts are a few dozen shapes.
 */
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
 * A write transaction's prepared statements run on their generic plan, planned once per
 * connection. Left to itself, PostgreSQL plans a prepared statement again at every execution
 * whenever its generic plan's estimate looks costlier than the custom plans': it did so for
 * ChangeLog's statement every time, 2.5 ms of planning per write, 2.8 of the 4.3 ms of database
 * CPU that statement cost (measured on the bench data). Writes find their rows by key, for
 * which the generic plan is as good. Reads keep the default: a list's plan depends on its filters.
 */
const GENERIC_PLANS = 'SET LOCAL plan_cache_mode = force_generic_plan';
const BEGIN_WRITE = `BEGIN; ${GENERIC_PLANS}`;

/**
 * The tables autovacuum would see to, with its default thresholds: VACUUM once the dead rows
 * pass a fifth of the table (and 50), ANALYZE once the rows changed since the last ANALYZE pass
 * a tenth (and 50), or the table has grown by a fifth and 8 pages since pg_class last learned its
 * size (which catches what the change counts miss: PGlite keeps them only while it runs). The
 * most overdue first. VACUUM alone for dead rows: ANALYZE reads a sample of the whole table,
 * which a table that only has dead rows to clean does not need.
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

/**
 * Runs `send`, which hands statements to `client`, with the connection's socket corked: pg
 * writes each statement's messages with a system call of its own (and PostgreSQL may wake for
 * each); corked, they leave in one. With BEGIN sent with the first statements, a patch makes 3
 * socket writes to the database where it made 8.
 */
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
const POOL_MAX = 10;
/**
 * How long a query waits for a connection before it fails (answered 503 database_unavailable):
 * while PostgreSQL is unreachable requests fail fast instead of queueing for ever.
 */
const POOL_CONNECTION_TIMEOUT_MS = 5_000;
const SESSION_OPTIONS = '-c TimeZone=UTC -c idle_in_transaction_session_timeout=15s -c jit=off';

export async function openDatabase(options: { databaseUrl: string | null; dataDir: string }): Promise<DatabaseEngine> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

function openPostgres(connectionString: string): DatabaseEngine {
  // keepAlive: a connection to a database host that vanished is noticed by TCP, not left hanging.
  // Startup parameters of every session: adapter-pg sends instants as text without an offset,
  // which PostgreSQL reads in the session's time zone, so every session runs in UTC, whatever
  // the server's default; and a transaction left open by a bug must not hold its locks for
  // ever, so the server ends it; and no JIT compilation: every statement here is short, and a
  // plan costed high by a guess (a burndown's generate_series) spent 0.4 to 1 s compiling at
  // each request. (Startup parameters, not a SET on connect: that SET would race the first
  // query the new connection is given.)
  // pipeline: a write's last statements go out together (DriverTransaction.pipeline); a
  // connection used one statement at a time behaves as without it, as long as no query asks
  // for what pg's pipeline mode refuses (the `rows` option, cursors, streams: none here) or sets
  // a query_timeout (which then destroys the connection).
  const pool = new Pool({
    connectionString,
    pipeline: true,
    max: POOL_MAX,
    connectionTimeoutMillis: POOL_CONNECTION_TIMEOUT_MS,
    keepAlive: true,
    options: SESSION_OPTIONS,
  });
  // A dropped idle connection (the database restarted, an administrator terminated it) must
  // not crash the process: the pool discards it and opens a new one when next asked.
  pool.on('error', () => undefined);
  const listeners: Client[] = [];
  let closed = false;
  // LISTEN needs a connection of its own for as long as it listens: not one of the pool's,
  // which serve queries (a held long poll holds no connection at all).
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
      // A connection lost mid-transaction (the server restarted, the backend was terminated)
      // reports it here as well as through the statement that fails: without a listener the
      // process would crash on it. The connection is then given up, not returned to the pool.
      const lost = (error: Error) => (broken = error);
      client.on('error', lost);
      const send = async (text: string, values: unknown[]): Promise<DriverResult> => {
        const answer = await client.query({ name: statementName(text), text, values });
        return { rows: answer.rows, affectedRows: answer.rowCount ?? 0 };
      };
      const sendCommit = async () => (await client.query('COMMIT')).command;
      const ending = new TransactionEnd();
      // BEGIN goes out in the same write as the work's first statements and is answered with
      // them: no round trip of its own. Should it fail (a cancel request landing on it), those
      // statements run outside any transaction, so they must only lock and read, as every
      // write's first statements do (docs/locking.md); a first batch that ends the transaction
      // writes, and waits for BEGIN's answer instead. Once BEGIN has failed, nothing follows it.
      let begin: Promise<unknown> | null = null;
      // The pool's connections are in pg's pipeline mode: each query goes out when it is made,
      // without waiting for the answer to the one before, and PostgreSQL runs them in order. A
      // failed statement aborts the transaction; the statements after it fail too, and a COMMIT
      // sent with them ends it as a ROLLBACK.
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
        // A connection that cannot even roll back is given up, not handed to the next request.
        // (After a pipelined COMMIT, the transaction is already over: ROLLBACK only warns.)
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
  // A data directory belongs to one process at a time (embedded-lock.ts): a second server, or
  // `npm run demo:key` while one runs, is refused rather than writing what the other never sees.
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
    // Its statements are prepared once, as on PostgreSQL (preparedOnPglite says why). PGlite runs
    // in this process, so there is no round trip to save: a pipeline's statements run one after
    // the other, then its COMMIT, which ends the transaction as on PostgreSQL.
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
    // query() and exec() wait for a transaction under way (PGlite's one session is every
    // request's, and a VACUUM cannot run inside a transaction), then hold the database
    // for as long as the statement takes.
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

/**
 * The end of a write transaction that may come with its last statements (DriverTransaction.pipeline):
 * once that COMMIT is sent, another statement is a bug in the caller, and fails instead of
 * running outside the transaction; the engine then sends no COMMIT of its own.
 */
class TransactionEnd {
  committed = false;
  /** Why the COMMIT did not commit, once it has been answered. */
  private failure: unknown;

  whileOpen<T>(send: () => Promise<T>): Promise<T> {
    if (this.committed) return Promise.reject(new Error('This transaction has committed: no statement can follow its last ones'));
    return send();
  }

  /**
   * Sends the COMMIT (`send` answers its command tag). PostgreSQL answers ROLLBACK instead when
   * the transaction had failed before: that must not pass for a commit.
   */
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

  /**
   * Once the work has returned: a COMMIT sent with the last statements that did not commit fails
   * the transaction, even when the work caught the failure of the statements it was sent with.
   */
  settle(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}

/**
 * The answers of statements sent together, or the first one's error in the order sent: after
 * a failed statement the transaction is aborted, and the ones behind it (a COMMIT too) only
 * report that.
 */
async function firstFailure<T>(sent: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}

/**
 * Statements on PGlite prepared once under their name (statementName) in PGlite's one session
 * and then only bound and executed: a write transaction's, and preparedQuery's. PGlite's own
 * query() parses and plans every statement again, and planning ChangeLog's statement in
 * WebAssembly cost more than running it (measured: a create's four statements 10.6 ms a
 * transaction as plain queries, 3.9 ms prepared). The protocol messages are the ones PGlite's
 * query() sends, with a statement name. Called while holding PGlite's transaction lock (inside
 * db.transaction(), or _runExclusiveTransaction); runExclusive takes its query lock, as query()
 * does. `prepared` maps each name to its parameter types.
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
