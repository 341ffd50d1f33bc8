import { OnApplicationShutdown } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { PrismaClient } from '../generated/prisma/client';
import type { DatabaseEngine } from './database-engine';
import { setTimeout as sleep } from 'node:timers/promises';
import { DriverQuery, DriverTransaction, RetryTransaction, Sql, SqlTransaction } from './sql';

/** How a statement reached the database, for onStatement listeners; in a write, its round trip and whether the COMMIT rode with it. */
export interface SentStatement {
  via: 'prisma' | 'sql' | 'preparedSql' | 'write';
  write?: { id: number; roundTrip: number; commit: boolean };
}

/** Why a write was run again (PrismaService.write): the database's own reasons, or RetryTransaction's. */
export type WriteRetryReason = 'deadlock' | 'serialization_failure' | 'locks_moved';

/**
 * Attempts before a failure reaches the client (409), with a random pause so that colliding
 * writes do not collide again. A last resort: the lock order leaves nothing to retry normally.
 */
const WRITE_ATTEMPTS = 4;
const RETRY_PAUSE_MS = { min: 2, max: 25 };

/**
 * Prisma Client on the engine chosen at start (PostgreSQL or PGlite). Services inject
 * this and call Prisma directly, always scoped by the caller's project: its model API where
 * a statement is not on a hot path, `sql` where it is, `write` for every change.
 */
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  /** Single statements on the driver, for the hot paths (Sql says why). */
  readonly sql: Sql;
  /** The same, prepared once per connection, for the look-ups by a unique key every request runs. */
  readonly preparedSql: Sql;
  private readonly statementListeners = new Set<(statement: string, sent: SentStatement) => void>();
  private writesObserved = 0;
  private readonly retryListeners = new Set<(reason: WriteRetryReason) => void>();
  private readonly observeStatements: boolean;

  constructor(
    readonly engine: DatabaseEngine,
    /** `observeStatements`: report every statement to onStatement listeners (tests count them); off in service. */
    options: { observeStatements?: boolean } = {},
  ) {
    super({
      adapter: engine.adapter,
      log: options.observeStatements ? [{ emit: 'event', level: 'query' }] : [],
    });
    this.observeStatements = options.observeStatements ?? false;
    this.sql = new Sql(this.observed(engine.query, 'sql'));
    this.preparedSql = new Sql(this.observed(engine.preparedQuery, 'preparedSql'));
    if (options.observeStatements) {
      (this as unknown as { $on(event: 'query', listener: (event: { query: string }) => void): void }).$on('query', (event) =>
        this.reportStatement(event.query, { via: 'prisma' }),
      );
    }
  }

  /**
   * The one way services run a change: `work` in one transaction (joining an Idempotency-Key's,
   * whose stored answer must commit with it). Deadlocks and RetryTransaction run `work` again,
   * so it must have no side effect outside the transaction.
   */
  async write<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const open = requestTransaction.getStore();
    if (open) return work(open.joined());
    for (let attempt = 1; ; attempt++) {
      try {
        let tx!: SqlTransaction;
        const result = await this.engine.transaction((driver) => work((tx = new SqlTransaction(this.observedTransaction(driver)))));
        tx.committed();
        return result;
      } catch (error) {
        const reason = retryReason(error);
        if (reason === null || attempt >= WRITE_ATTEMPTS) throw error;
        for (const listener of this.retryListeners) listener(reason);
        await sleep(RETRY_PAUSE_MS.min + Math.random() * (RETRY_PAUSE_MS.max - RETRY_PAUSE_MS.min));
      }
    }
  }

  /** Calls `listener` each time a write is run again, with the reason (metrics). */
  onWriteRetry(listener: (reason: WriteRetryReason) => void): void {
    this.retryListeners.add(listener);
  }

  /** `query`, reporting each statement to the onStatement listeners when observeStatements is on. */
  private observed(query: DriverQuery, via: 'sql' | 'preparedSql'): DriverQuery {
    if (!this.observeStatements) return query;
    return (text, values) => {
      this.reportStatement(text, { via });
      return query(text, values);
    };
  }

  private observedTransaction(driver: DriverTransaction): DriverTransaction {
    if (!this.observeStatements) return driver;
    const id = ++this.writesObserved;
    let roundTrip = 0;
    const report = (texts: string[], commit: boolean) => {
      const write = { id, roundTrip: ++roundTrip, commit };
      for (const text of texts) this.reportStatement(text, { via: 'write', write });
    };
    return {
      query: (text, values) => {
        report([text], false);
        return driver.query(text, values);
      },
      pipeline: (statements, options) => {
        report(
          statements.map(({ text }) => text),
          options.commit,
        );
        return driver.pipeline(statements, options);
      },
    };
  }

  private reportStatement(text: string, sent: SentStatement): void {
    for (const listener of this.statementListeners) listener(text, sent);
  }

  /** Runs `work` with every `write` inside it joining `tx`. */
  static withinTransaction<T>(tx: SqlTransaction, work: () => Promise<T>): Promise<T> {
    return requestTransaction.run(tx, work);
  }

  /** Calls `listener` with the text of every statement sent, by Prisma or on the driver, and how, when observeStatements is on (tests). */
  onStatement(listener: (statement: string, sent: SentStatement) => void): () => void {
    this.statementListeners.add(listener);
    return () => this.statementListeners.delete(listener);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
    await this.engine.close();
  }
}

const requestTransaction = new AsyncLocalStorage<SqlTransaction>();

/** Whether a failed write may run again, and why: SQLSTATE 40P01 and 40001 (from pg or PGlite), or RetryTransaction. */
function retryReason(error: unknown): WriteRetryReason | null {
  if (error instanceof RetryTransaction) return 'locks_moved';
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (code === '40P01') return 'deadlock';
  if (code === '40001') return 'serialization_failure';
  return null;
}
