import type { Selectable } from 'kysely';
import type { DB } from '../generated/kysely/tables';
import { Prisma } from '../generated/prisma/client';

/**
 * A statement that knows its rows: the type is written once, beside its SELECT list, from the
 * schema (Column) or the DTOs, so that who runs it asserts nothing.
 */
export type Statement<Row = unknown> = Prisma.Sql & { readonly [ROW]?: Row };
declare const ROW: unique symbol;

export function statement<Row>(sql: Prisma.Sql): Statement<Row> {
  return sql;
}

/** The rows `statement` answered, among answers whose order lost their types (a pipeline built by spreading lists). */
export function rowsOf<S extends Statement>(statement: S, rows: unknown[]): RowOf<S>[] {
  return rows as RowOf<S>[];
}

/** The rows `S` answers. */
export type RowOf<S> = S extends Statement<infer Row> ? Row : unknown;

/** The rows of each of `S`, in order (what pipeline and finish answer). */
export type RowsOf<S extends readonly Prisma.Sql[]> = { -readonly [K in keyof S]: RowOf<S[K]>[] };

/** A column as schema.prisma declares it (prisma-kysely's types), as the driver answers it read as stored. */
export type Column<Table extends keyof DB, Name extends keyof Selectable<DB[Table]>> = Selectable<DB[Table]>[Name];

/** What one statement answered: its rows and how many rows it changed. */
export interface DriverResult {
  rows: unknown[];
  affectedRows: number;
}

/** One statement on the database driver. */
export type DriverQuery = (text: string, values: unknown[]) => Promise<DriverResult>;

/** A write transaction on the driver, as DatabaseEngine.transaction hands it to its work. */
export interface DriverTransaction {
  query: DriverQuery;
  /** Sends `statements` in one round trip, with `commit` the COMMIT behind them; rejects with the first error. */
  pipeline(statements: { text: string; values: unknown[] }[], options: { commit: boolean }): Promise<DriverResult[]>;
}

/**
 * Prisma.sql templates sent straight through the driver: even Prisma's raw queries pass its
 * query compiler, which cost more Node CPU than the database work of the hot paths.
 */
export class Sql {
  constructor(private readonly query: DriverQuery) {}

  /** The rows of one statement. */
  async $queryRaw<T = unknown>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<T> {
    const sql = toSql(query, values);
    return (await this.query(sql.text, sql.values)).rows as T;
  }

  /** The rows of a statement that knows them (Statement). */
  async rows<S extends Statement>(statement: S): Promise<RowOf<S>[]> {
    return (await this.query(statement.text, statement.values)).rows as RowOf<S>[];
  }

  /** How many rows one statement inserted, updated or deleted. */
  async $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number> {
    const sql = toSql(query, values);
    return (await this.query(sql.text, sql.values)).affectedRows;
  }
}

/** One CTE, `name AS (body)`: statements built from parts join these (withCtes), not text that must end in a comma. */
export interface Cte {
  readonly name: string;
  /** Computed once, whatever the plan (AS MATERIALIZED). */
  readonly materialized: boolean;
  readonly strings: readonly string[];
  readonly values: readonly unknown[];
}

/** A template tag: cte('name')`SELECT ...` is the CTE `name AS (SELECT ...)`. */
export function cte(name: string, options: { materialized?: boolean } = {}): (strings: readonly string[], ...values: unknown[]) => Cte {
  return (strings, ...values) => ({ name, materialized: options.materialized ?? false, strings, values });
}

/** A template tag: withCtes(ctes)`SELECT ...` is `WITH name AS (body), ... SELECT ...`, joined in one step. */
export function withCtes(ctes: readonly Cte[]): (strings: readonly string[], ...values: unknown[]) => Prisma.Sql {
  return (strings, ...values) => {
    const joined = [''];
    const joinedValues: unknown[] = [];
    const append = (parts: readonly string[], partValues: readonly unknown[]) => {
      joined[joined.length - 1] += parts[0];
      for (let i = 0; i < partValues.length; i++) {
        joinedValues.push(partValues[i]);
        joined.push(parts[i + 1]);
      }
    };
    ctes.forEach((each, index) => {
      joined[joined.length - 1] += `${index === 0 ? 'WITH ' : ',\n'}${each.name} AS ${each.materialized ? 'MATERIALIZED ' : ''}(`;
      append(each.strings, each.values);
      joined[joined.length - 1] += ')';
    });
    if (ctes.length > 0) joined[joined.length - 1] += '\n';
    append(strings, values);
    return new Prisma.Sql(joined, joinedValues);
  };
}

/** A write transaction, as services see it inside `PrismaService.write`. */
export class SqlTransaction extends Sql {
  private readonly onCommit: (() => void)[] = [];

  /** `outer`: the transaction this write joined (an Idempotency-Key's, src/idempotency), which commits it. */
  constructor(
    private readonly driver: DriverTransaction,
    private readonly outer?: SqlTransaction,
  ) {
    super(driver.query);
  }

  /** The same transaction for a write that joins it: its `finish` leaves the COMMIT to this one. */
  joined(): SqlTransaction {
    return new SqlTransaction(this.driver, this);
  }

  /** Sends `queries` in one round trip; the database runs them in order. */
  pipeline<S extends readonly Statement[]>(...queries: S): Promise<RowsOf<S>>;
  pipeline<T extends unknown[][] = unknown[][]>(...queries: Prisma.Sql[]): Promise<T>;
  async pipeline(...queries: Prisma.Sql[]): Promise<unknown[][]> {
    return this.send(queries, false);
  }

  /**
   * The last statements with the COMMIT behind them (left to an outer transaction it joined):
   * they hold the project's event row, so no write of the project should wait for Node meanwhile.
   */
  finish<S extends readonly Statement[]>(...queries: S): Promise<RowsOf<S>>;
  finish<T extends unknown[][] = unknown[][]>(...queries: Prisma.Sql[]): Promise<T>;
  async finish(...queries: Prisma.Sql[]): Promise<unknown[][]> {
    return this.send(queries, this.outer === undefined);
  }

  private async send(queries: Prisma.Sql[], commit: boolean): Promise<unknown[][]> {
    const answers = await this.driver.pipeline(
      queries.map((query) => ({ text: query.text, values: query.values })),
      { commit },
    );
    return answers.map((answer) => answer.rows);
  }

  /** Takes the advisory lock `name` in a statement of its own, so that the next one sees what its holder committed. */
  async lock(name: string): Promise<void> {
    await this.$queryRaw(advisoryLock(name));
  }

  /** The same lock without waiting: false when another transaction holds it. */
  async tryLock(name: string): Promise<boolean> {
    const [row] = await this.$queryRaw<{ locked: boolean }[]>(tryLockStatement(name));
    return row.locked;
  }

  /** Runs `then` once the transaction has committed (never if it rolls back): counters of what it wrote, say. */
  afterCommit(then: () => void): void {
    if (this.outer) this.outer.afterCommit(then);
    else this.onCommit.push(then);
  }

  /** For PrismaService.write, after COMMIT. */
  committed(): void {
    for (const then of this.onCommit) then();
  }
}

/** Thrown by a write whose locks turned out not to cover what it must hold: PrismaService.write runs it again. */
export class RetryTransaction extends Error {
  constructor(reason: string) {
    super(`The write must run again: ${reason}`);
  }
}

/** SqlTransaction.lock's statement, to send with others (SqlTransaction.pipeline). */
export function advisoryLock(name: string): Prisma.Sql {
  return Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))::text AS locked`;
}

/** SqlTransaction.tryLock's statement (`locked`), to send with others (SqlTransaction.pipeline). */
export function tryLockStatement(name: string): Prisma.Sql {
  return Prisma.sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${name}, 0)) AS locked`;
}

/** Runs `step` until it removes fewer than `batch` rows: no housekeeping statement holds many rows or runs long. */
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
