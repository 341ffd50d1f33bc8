import type { SqlSession } from '../../database/database-engine';
import type { FieldTable } from './fields';

/**
 * What the database must hold of a field table's kinds, so that it refuses what the API refuses:
 * each column's type and each kind's CHECK constraints (FieldKind.columnType and checks), compared
 * with what a database holds. test/field-tables.e2e-spec.ts fails on any difference, naming it;
 * `npm run db:migration` writes the migration that adds the missing constraints
 * (src/database/new-migration.cli.ts). One source: the kinds in fields.ts.
 */

/** A CHECK constraint a field's kind requires: `<table>_<column>_<suffix>`. */
export interface RequiredCheck {
  table: string;
  column: string;
  name: string;
  predicate: string;
}

/** Something the database lacks or holds otherwise than the field tables say, and the SQL that fixes it where SQL can. */
export interface RuleDifference {
  problem: string;
  /** A statement for a migration; none where the fix is in schema.prisma. */
  fix?: string;
}

/** The CHECK constraints the kinds of `table`'s fields require on the SQL table `tableName`. */
export function requiredChecks(tableName: string, table: FieldTable): RequiredCheck[] {
  return Object.values(table).flatMap((field) =>
    Object.entries(field.kind.checks(field.column)).map(([suffix, predicate]) => ({
      table: tableName,
      column: field.column,
      name: `${tableName}_${field.column}_${suffix}`,
      predicate,
    })),
  );
}

const addCheck = (check: RequiredCheck) => `ALTER TABLE "${check.table}" ADD CONSTRAINT "${check.name}" CHECK (${check.predicate});`;

/**
 * How schema.prisma writes a column type as PostgreSQL's format_type shows it, for messages.
 * Prisma's own default types need no attribute (`Int`, `String` would be `text`).
 */
function prismaType(columnType: string): string {
  const varchar = /^character varying\((\d+)\)$/.exec(columnType);
  if (varchar) return `String @db.VarChar(${varchar[1]})`;
  const numeric = /^numeric\((\d+),(\d+)\)$/.exec(columnType);
  if (numeric) return `Decimal @db.Decimal(${numeric[1]}, ${numeric[2]})`;
  const known: Record<string, string> = {
    integer: 'Int',
    uuid: 'String @db.Uuid',
    date: 'DateTime @db.Date',
    'timestamp(3) with time zone': 'DateTime @db.Timestamptz(3)',
    json: 'Json @db.Json',
  };
  return known[columnType] ?? `the enum ${columnType}`;
}

/**
 * Every difference between what `tables` (SQL table name to field table) require and what the
 * database of `session` holds: a missing column, a column of another type or nullability, an
 * enum with other values, a CHECK missing, different, or named after a field's column that its
 * kind does not derive. CHECKs are compared as PostgreSQL itself writes them back
 * (pg_get_constraintdef), by adding the required ones to an empty copy of each table in a
 * transaction that is rolled back.
 */
export async function fieldRuleDifferences(session: SqlSession, tables: Record<string, FieldTable>): Promise<RuleDifference[]> {
  const differences: RuleDifference[] = [];
  for (const [tableName, table] of Object.entries(tables)) {
    const columns = await session.query<{ name: string; type: string; nullable: boolean; udt: string }>(
      `SELECT a.attname::text AS name, format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable, a.atttypid::regtype::text AS udt
         FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
      [tableName],
    );
    const byName = new Map(columns.map((column) => [column.name, column]));
    for (const [apiName, field] of Object.entries(table)) {
      const column = byName.get(field.column);
      const where = `${tableName}.${field.column} (${apiName})`;
      if (!column) {
        differences.push({ problem: `${where}: no such column in the database: its migration is missing (npm run db:migration)` });
        continue;
      }
      if (column.type !== field.kind.columnType) {
        differences.push({
          problem: `${where} is ${column.type} in the database; its kind needs ${field.kind.columnType} (schema.prisma: ${prismaType(field.kind.columnType)})`,
        });
      }
      if (column.nullable !== (field.nullable === true)) {
        differences.push({
          problem: `${where} is ${column.nullable ? '' : 'NOT '}NULL in the database; its row says ${field.nullable ? '' : 'not '}nullable`,
        });
      }
      const values = (field.kind.schema as { enum?: string[] }).enum;
      if (values) {
        const labels = await session.query<{ label: string }>(
          `SELECT enumlabel::text AS label FROM pg_enum WHERE enumtypid = $1::regtype ORDER BY enumsortorder`,
          [column.udt],
        );
        const held = labels.map((row) => row.label);
        if (held.join(',') !== values.join(',')) {
          differences.push({
            problem: `${where}: the enum ${column.udt} holds ${held.join(', ')}; its kind allows ${values.join(', ')} (schema.prisma)`,
          });
        }
      }
    }

    const required = requiredChecks(tableName, table);
    const held = new Map(
      (
        await session.query<{ name: string; definition: string }>(
          `SELECT conname::text AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`,
          [tableName],
        )
      ).map((row) => [row.name, row.definition]),
    );
    const wanted = await asWrittenBack(
      session,
      tableName,
      required.filter((check) => byName.has(check.column)),
    );
    for (const check of required) {
      const definition = held.get(check.name);
      if (definition === undefined) {
        differences.push({ problem: `${tableName}: CHECK ${check.name} is missing (${check.predicate})`, fix: addCheck(check) });
      } else if (wanted.has(check.name) && definition !== wanted.get(check.name)) {
        differences.push({
          problem: `${tableName}: CHECK ${check.name} is ${definition} in the database; its kind needs ${wanted.get(check.name)}`,
          fix: `ALTER TABLE "${tableName}" DROP CONSTRAINT "${check.name}";\n${addCheck(check)}`,
        });
      }
    }
    // A CHECK named after a field's column that its kind no longer derives (the kind changed).
    const requiredNames = new Set(required.map((check) => check.name));
    const fieldColumns = Object.values(table)
      .map((field) => field.column)
      .sort((a, b) => b.length - a.length);
    for (const name of held.keys()) {
      const column = fieldColumns.find((candidate) => name.startsWith(`${tableName}_${candidate}_`));
      if (column && !requiredNames.has(name)) {
        differences.push({
          problem: `${tableName}: CHECK ${name} is on the column ${column}, but its row's kind does not derive it`,
          fix: `ALTER TABLE "${tableName}" DROP CONSTRAINT "${name}";`,
        });
      }
    }
  }
  return differences;
}

/** The definitions PostgreSQL writes back for `checks` on `tableName`, by name. */
async function asWrittenBack(session: SqlSession, tableName: string, checks: RequiredCheck[]): Promise<Map<string, string>> {
  if (checks.length === 0) return new Map();
  await session.exec('BEGIN');
  try {
    await session.exec(`CREATE TEMPORARY TABLE field_rules_probe (LIKE "${tableName}")`);
    for (const check of checks) await session.exec(addCheck({ ...check, table: 'field_rules_probe' }));
    const rows = await session.query<{ name: string; definition: string }>(
      `SELECT conname::text AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conrelid = 'field_rules_probe'::regclass AND contype = 'c'`,
    );
    return new Map(rows.map((row) => [row.name, row.definition]));
  } finally {
    await session.exec('ROLLBACK');
  }
}
