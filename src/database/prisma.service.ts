import { OnApplicationShutdown } from '@nestjs/common';
import { PrismaClient } from '../generated/prisma/client';
import type { DatabaseEngine } from './database-engine';

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

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
    await this.engine.close();
  }
}

/** The client handed to the callback of `prisma.$transaction(async (tx) => ...)`. */
export type PrismaTransaction = Parameters<Parameters<PrismaService['$transaction']>[0]>[0];
