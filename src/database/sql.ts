import { Prisma } from '../generated/prisma/client';

/** One statement on the database driver: rows and how many rows it changed. */
export type DriverQuery = (text: string, values: unknown[]) => Promise<{ rows: unknown[]; affectedRows: number }>;

/**
 * SQL sent straight through the database driver (pg, or PGlite), with the same tagged
 * templates (Prisma.sql) as Prisma's `$queryRaw` and `$executeRaw`, and the same SQL.
 *
 * Why not Prisma's own: even a raw query goes through Prisma's query compiler (WASM) and its
 * request handling, which cost more Node CPU than the database work on the hot paths (README.md,
 * Performance): the key lookup of every request, the list and feed reads, every write.
 * `PrismaService.sql` runs single statements; `PrismaService.write` hands out a SqlTransaction.
 */
export class Sql {
  constructor(private readonly query: DriverQuery) {}

  /** The rows of one statement. */
  async $queryRaw<T = unknown>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<T> {
    const sql = toSql(query, values);
    return (await this.query(sql.text, sql.values)).rows as T;
  }

  /** How many rows one statement inserted, updated or deleted. */
  async $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number> {
    const sql = toSql(query, values);
    return (await this.query(sql.text, sql.values)).affectedRows;
  }
}

/** A write transaction, as services see it inside `PrismaService.write`. */
export class SqlTransaction extends Sql {
  private readonly onCommit: (() => void)[] = [];

  /**
   * Takes the transaction-scoped advisory lock named `name`, waiting for it: the transactions
   * that take it run that part one at a time, across instances. A statement sent after this one
   * sees what the previous holder committed (a statement that waits sees only what its own
   * start saw, so the lock is taken in a statement of its own).
   */
  async lock(name: string): Promise<void> {
    await this.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))::text AS locked`;
  }

  /** The same lock without waiting: false when another transaction holds it. */
  async tryLock(name: string): Promise<boolean> {
    const [row] = await this.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtextextended(${name}, 0)) AS locked`;
    return row.locked;
  }

  /** Runs `then` once the transaction has committed (never if it rolls back): counters of what it wrote, say. */
  afterCommit(then: () => void): void {
    this.onCommit.push(then);
  }

  /** For PrismaService.write, after COMMIT. */
  committed(): void {
    for (const then of this.onCommit) then();
  }
}

/**
 * Runs `step` (a statement that removes at most `batch` rows, answering how many) until it
 * removes fewer: housekeeping in batches, so that no statement holds many rows or runs long.
 * Answers how many in all.
 */
export async function inBatches(batch: number, step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await step();
    total += count;
    if (count < batch) return total;
  }
}

function toSql(query: TemplateStringsArray | Prisma.Sql, values: unknown[]): Prisma.Sql {
  return query instanceof Prisma.Sql ? query : Prisma.sql(query, ...values);
}
