import { OnApplicationShutdown } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { PrismaClient } from '../generated/prisma/client';
import type { DatabaseEngine } from './database-engine';
import { SqlTransaction } from './sql-transaction';

/**
 * Prisma Client on the engine chosen at start (PostgreSQL or PGlite). Services inject
 * this and call Prisma directly, always scoped by the caller's project.
 */
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  constructor(
    readonly engine: DatabaseEngine,
    options: { emitQueryEvents?: boolean } = {},
  ) {
    super({
      adapter: engine.adapter,
      log: options.emitQueryEvents ? [{ emit: 'event', level: 'query' }] : [],
      // PGlite runs one statement at a time: under load a transaction may wait its turn.
      transactionOptions: { maxWait: 10_000, timeout: 15_000 },
    });
  }

  /**
   * The one way services run a change: `work` in one transaction, on the database driver
   * directly (SqlTransaction says why). When the request already holds one (a write sent with
   * an Idempotency-Key, whose stored answer must commit with the change: src/idempotency), the
   * change joins it instead of opening its own.
   */
  async write<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const open = requestTransaction.getStore();
    if (open) return work(open);
    let tx!: SqlTransaction;
    const result = await this.engine.transaction((query) => work((tx = new SqlTransaction(query))));
    tx.committed();
    return result;
  }

  /** Runs `work` with every `write` inside it joining `tx`. */
  static withinTransaction<T>(tx: SqlTransaction, work: () => Promise<T>): Promise<T> {
    return requestTransaction.run(tx, work);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
    await this.engine.close();
  }
}

const requestTransaction = new AsyncLocalStorage<SqlTransaction>();
