import type { Selectable } from 'kysely';
import type { DB } from '../generated/kysely/tables';
import { Prisma } from '../generated/prisma/client';

/**
 * A statement that knows the rows it answers: its row type is written once, where its SELECT
 * list is (`statement<Row>(sql)`), from the schema's tables (Column) for what it reads as
 * stored, and from the DTOs for the JSON it builds (whose fields the field tables tie to the
 * schema). Sql.rows, SqlTransaction.pipeline and finish infer it: who runs it asserts nothing.
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

/**
 * A column of a table as schema.prisma declares it (the generated types, prisma-kysely), as the
 * driver answers it read as stored: text and uuid as strings, numeric as a string, timestamps and
 * dates as Dates, json parsed, enums as their values; a bigint `string | number`, as pg and
 * PGlite answer it (schema.prisma's kysely generator), so a statement reads one `::text`.
 */
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
  /**
   * Sends `statements` without waiting for each answer before sending the next (on PostgreSQL,
   * one round trip), and with `commit` the COMMIT behind them, after which the transaction is
   * over. The database runs them in order, each seeing what the ones before it did. Answers each
   * statement's result, or rejects with the first one's error (the transaction then rolls back).
   */
  pipeline(statements: { text: string; values: unknown[] }[], options: { commit: boolean }): Promise<DriverResult[]>;
}

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

/**
 * One common table expression of a WITH list, `name AS (body)`, its body a template as for
 * Prisma.sql: statements assembled from parts (ChangeLog.record with the sprint ledger and the
 * task view) pass these around and join them with `withCtes`, rather than text that must end
 * with a comma.
 */
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

/**
 * A template tag: withCtes(ctes)`SELECT ...` is one statement, `WITH name AS (body), ... SELECT ...`
 * (the SELECT alone without CTEs); each CTE reads those before it. The parts are joined into one
 * Prisma.Sql in one step, as one template holding them all would be: no part is copied twice.
 */
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

  /**
   * Sends `queries` together, without waiting for each answer before sending the next: one round
   * trip. The database runs them in order, each seeing what the ones before it did. Answers
   * each statement's rows, in order.
   */
  pipeline<S extends readonly Statement[]>(...queries: S): Promise<RowsOf<S>>;
  pipeline<T extends unknown[][] = unknown[][]>(...queries: Prisma.Sql[]): Promise<T>;
  async pipeline(...queries: Prisma.Sql[]): Promise<unknown[][]> {
    return this.send(queries, false);
  }

  /**
   * Sends this write's last statements as `pipeline` does, with the COMMIT behind them; no
   * statement may follow. In a write that joined an outer transaction the COMMIT is left to the
   * outer one, which goes on after them.
   *
   * Why: a change's last statements hold its project's event numbers until COMMIT (ChangeLog),
   * so every write of the project waits for them; sent one at a time, each also waited for Node
   * to read an answer and send the next statement, which a busy process makes slow.
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

  /**
   * Takes the transaction-scoped advisory lock named `name`, waiting for it: the transactions
   * that take it run that part one at a time, across instances. A statement sent after this one
   * sees what the previous holder committed (a statement that waits sees only what its own
   * start saw, so the lock is taken in a statement of its own).
   */
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

/**
 * Thrown by a write whose locks turned out not to cover what it must hold (a row it found through
 * another changed before it could lock it, docs/locking.md): PrismaService.write rolls it back and
 * runs it again from the start, as it does after a deadlock or a serialization failure.
 */
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
