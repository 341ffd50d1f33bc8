import { Prisma } from '../generated/prisma/client';

/** One statement on the connection that holds a transaction: rows and how many rows it changed. */
export type TransactionQuery = (text: string, values: unknown[]) => Promise<{ rows: unknown[]; affectedRows: number }>;

/**
 * A write transaction, as services see it inside `PrismaService.write`: `$queryRaw` and
 * `$executeRaw` with the same tagged templates (Prisma.sql) as outside a transaction, sent
 * straight through the connection the transaction holds.
 *
 * Why not Prisma's interactive `$transaction`: on every write, its transaction handling and
 * its query compiler cost more Node CPU than the database work itself (README.md,
 * Performance: writes). The SQL and its parameters are the same; only the driver call differs.
 */
export class SqlTransaction {
  private readonly onCommit: (() => void)[] = [];

  constructor(private readonly query: TransactionQuery) {}

  /** Runs `then` once the transaction has committed (never if it rolls back): counters of what it wrote, say. */
  afterCommit(then: () => void): void {
    this.onCommit.push(then);
  }

  /** For PrismaService.write, after COMMIT. */
  committed(): void {
    for (const then of this.onCommit) then();
  }

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

function toSql(query: TemplateStringsArray | Prisma.Sql, values: unknown[]): Prisma.Sql {
  return query instanceof Prisma.Sql ? query : Prisma.sql(query, ...values);
}
