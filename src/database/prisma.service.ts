import { OnApplicationShutdown } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { PrismaClient } from '../generated/prisma/client';
import type { DatabaseEngine } from './database-engine';
import { DriverQuery, Sql, SqlTransaction } from './sql';

/**
 * Prisma Client on the engine chosen at start (PostgreSQL or PGlite). Services inject
 * this and call Prisma directly, always scoped by the caller's project: its model API where
 * a statement is not on a hot path, `sql` where it is, `write` for every change.
 */
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  /** Single statements on the driver, for the hot paths (Sql says why). */
  readonly sql: Sql;
  /**
   * The same, prepared once per connection: for the few look-ups by a unique key that every
   * request runs (its key, the task list version), which PostgreSQL would otherwise parse and
   * plan each time (DatabaseEngine.preparedQuery).
   */
  readonly preparedSql: Sql;
  private readonly statementListeners = new Set<(statement: string) => void>();
  private readonly transactionQuery: (query: DriverQuery) => DriverQuery;

  constructor(
    readonly engine: DatabaseEngine,
    /** `observeStatements`: report every statement to onStatement listeners (tests count them); off in service. */
    options: { observeStatements?: boolean } = {},
  ) {
    super({
      adapter: engine.adapter,
      log: options.observeStatements ? [{ emit: 'event', level: 'query' }] : [],
    });
    const observed =
      (query: DriverQuery): DriverQuery =>
      (text, values) => {
        for (const listener of this.statementListeners) listener(text);
        return query(text, values);
      };
    this.transactionQuery = options.observeStatements ? observed : (query) => query;
    this.sql = new Sql(this.transactionQuery(engine.query));
    this.preparedSql = new Sql(this.transactionQuery(engine.preparedQuery));
    if (options.observeStatements) {
      (this as unknown as { $on(event: 'query', listener: (event: { query: string }) => void): void }).$on('query', (event) => {
        for (const listener of this.statementListeners) listener(event.query);
      });
    }
  }

  /**
   * The one way services run a change: `work` in one transaction, on the database driver
   * directly (Sql says why). When the request already holds one (a write sent with an
   * Idempotency-Key, whose stored answer must commit with the change: src/idempotency), the
   * change joins it instead of opening its own.
   */
  async write<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const open = requestTransaction.getStore();
    if (open) return work(open);
    let tx!: SqlTransaction;
    const result = await this.engine.transaction((query) => work((tx = new SqlTransaction(this.transactionQuery(query)))));
    tx.committed();
    return result;
  }

  /** Runs `work` with every `write` inside it joining `tx`. */
  static withinTransaction<T>(tx: SqlTransaction, work: () => Promise<T>): Promise<T> {
    return requestTransaction.run(tx, work);
  }

  /** Calls `listener` with the text of every statement sent, by Prisma or on the driver, when observeStatements is on (tests). */
  onStatement(listener: (statement: string) => void): () => void {
    this.statementListeners.add(listener);
    return () => this.statementListeners.delete(listener);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
    await this.engine.close();
  }
}

const requestTransaction = new AsyncLocalStorage<SqlTransaction>();
