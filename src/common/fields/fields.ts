import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IsIn, IsNumber, IsOptional, IsString, Max, Min } from 'class-validator';
import { Prisma } from '../../generated/prisma/client';
import { isoTimestamp } from '../dates';
import { IsCalendarDate, IsNotBlank, IsText, OptionalButNotNull } from '../validation/validators';

/**
 * A resource's fields described once: for each column of its table, how the API names it,
 * stores it, reads it, validates it, documents it and shows it. The SQL of the hot paths
 * (inserts, updates, the lock's SELECT, the JSON views), the TypeScript shape of a resource's
 * fields and the DTO properties' decorators are derived from such a table (src/tasks/task-fields.ts,
 * src/sprints/sprint-fields.ts), so that a field is added in one place: docs/extending.md.
 */

/** What kind of value a field holds: how it is written, read, checked and documented. */
export interface FieldKind<T> {
  /** The SQL type a value is cast to when written. */
  readonly sqlType: string;
  /**
   * SQL that reads the column (`column`, as `t.title`) as the API shows the value: the same
   * value in a JSON view (json_build_object) and from the driver (the lock's SELECT).
   */
  read(column: string): string;
  /** The OpenAPI schema of a value, without its nullability. */
  readonly schema: SchemaObject;
  /** The class-validator rules of a value sent in a body (once it is neither absent nor null). */
  readonly validators: PropertyDecorator[];
  /** Never set: carries the type of the values (Value<...>). */
  readonly type?: T;
}

/** The TypeScript type of a field kind's values. */
export type KindValue<K> = K extends FieldKind<infer T> ? T : never;

/** Text of `min` to `max` code points (decisions.md: lengths count code points). */
export function text(min: number, max: number, options: { notBlank?: boolean } = {}): FieldKind<string> {
  return {
    sqlType: 'text',
    read: (column) => column,
    schema: { type: 'string', ...(min > 0 ? { minLength: min } : {}), maxLength: max },
    validators: [IsString(), IsText(min, max), ...(options.notBlank ? [IsNotBlank()] : [])],
  };
}

/** One of `values`, stored as the database enum `sqlType`. */
export function oneOf<T extends string>(values: readonly T[], sqlType: string): FieldKind<T> {
  return {
    sqlType,
    read: (column) => `${column}::text`,
    schema: { type: 'string', enum: [...values] },
    validators: [IsIn(values, { message: `must be one of: ${values.join(', ')}` })],
  };
}

/**
 * The id of another record of the project. Any string is accepted here: one that is not an
 * id of the project is answered 404 by the reference check, as an unknown id is.
 */
export function reference(): FieldKind<string> {
  return { sqlType: 'uuid', read: (column) => `${column}::text`, schema: { type: 'string', format: 'uuid' }, validators: [IsString()] };
}

/** A calendar day, YYYY-MM-DD (a civil day in Madrid). */
export function calendarDate(): FieldKind<string> {
  return {
    sqlType: 'date',
    read: (column) => `to_char(${column}, 'YYYY-MM-DD')`,
    schema: { type: 'string', format: 'date' },
    validators: [IsCalendarDate()],
  };
}

/** An instant, as the contract writes them (UTC, milliseconds). Written by the service only. */
export function instant(): FieldKind<string> {
  return { sqlType: 'timestamptz', read: isoTimestamp, schema: { type: 'string', format: 'date-time' }, validators: [] };
}

/** A record's id. Written by the service only. */
export function id(): FieldKind<string> {
  return { sqlType: 'uuid', read: (column) => column, schema: { type: 'string', format: 'uuid' }, validators: [] };
}

/** A JSON document the service writes and answers as stored (a frozen sprint report). */
export function json(): FieldKind<unknown> {
  return { sqlType: 'json', read: (column) => column, schema: { type: 'object' }, validators: [] };
}

/** A number from `min` to `max` with at most `decimals` decimal places, stored as `numeric`. */
export function decimal(min: number, max: number, decimals: number): FieldKind<number> {
  return {
    sqlType: 'numeric',
    // float8: a JSON number without trailing zeros (3, not 3.0), and a number from the driver.
    read: (column) => `${column}::float8`,
    schema: { type: 'number', minimum: min, maximum: max, description: `at most ${decimals} decimal place${decimals === 1 ? '' : 's'}` },
    validators: [
      IsNumber(
        { allowNaN: false, allowInfinity: false, maxDecimalPlaces: decimals },
        { message: `must be a number with at most ${decimals} decimal place${decimals === 1 ? '' : 's'}` },
      ),
      Min(min, { message: `must be from ${min} to ${max}` }),
      Max(max, { message: `must be from ${min} to ${max}` }),
    ],
  };
}

/** One column of a resource's table. */
export interface Field<T = unknown> {
  /** The column, in snake_case. */
  readonly column: string;
  readonly kind: FieldKind<T>;
  /** The column may be NULL (as schema.prisma says: TableOf checks it); for a field clients write, null clears it. */
  readonly nullable?: boolean;
  /**
   * Sent by clients: `default`, its value at creation when the body leaves it out (none: the body
   * must send it); `createOnly`, a PATCH may not change it.
   */
  readonly write?: { readonly default?: T | null; readonly createOnly?: boolean };
  /**
   * Where answers show it under its API name: `list` (every answer), `detail` (not in lists),
   * `trash` (only as the trash lists it). Absent: answers do not show it as it is (a column
   * shown through a hand-written view, or not shown at all).
   */
  readonly shown?: 'list' | 'detail' | 'trash';
}

/** The value of a field as the API reads and writes it (null where it may be null). */
export type FieldValue<F> = F extends { kind: FieldKind<infer T> } ? (F extends { nullable: true } ? T | null : T) : never;

/** A table of fields by API name. */
export type FieldTable = Record<string, Field>;

/**
 * What a resource's field table must be: one row per column of `Model` (the type Prisma generates
 * from schema.prisma for the table), no more, nullable exactly where the column is. Written as
 * `const FIELDS = {...} satisfies TableOf<Task>`, a column added to schema.prisma without its row
 * fails the build.
 */
export type TableOf<Model> = { [K in keyof Model]: null extends Model[K] ? Field & { nullable: true } : Field & { nullable?: false } };

/** The API names of the fields clients send (on create). */
export type WritableField<Table extends FieldTable> = { [K in keyof Table]: Table[K] extends { write: object } ? K : never }[keyof Table];

/** The API names of the fields a PATCH may change. */
export type PatchableField<Table extends FieldTable> = {
  [K in keyof Table]: Table[K] extends { write: { createOnly: true } } ? never : Table[K] extends { write: object } ? K : never;
}[keyof Table];

/** The API names of the fields answers show as they are, in `view`. */
export type ShownField<Table extends FieldTable, View extends 'list' | 'detail' | 'trash'> = {
  [K in keyof Table]: Table[K] extends { shown: View } ? K : never;
}[keyof Table];

/** The values of `Table`'s fields `K`, as the API names them. */
export type FieldValues<Table extends FieldTable, K extends keyof Table = keyof Table> = { [P in K]: FieldValue<Table[P]> };

/**
 * Compiles only when A and B are the same set of keys: `const check: SameKeys<A, B> = true`
 * fails the build when a DTO and its field table disagree, naming the keys.
 */
export type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : { missingFromFirst: Exclude<B, A> }) : { missingFromSecond: Exclude<A, B> };

/**
 * The class-validator rules and OpenAPI property of a body field, from its row: absent is
 * allowed unless the field has no default; null only where it is nullable.
 */
export function bodyField(field: Field): PropertyDecorator {
  if (!field.write) throw new Error(`${field.column} is not written by clients`);
  const required = !('default' in field.write);
  const { default: byDefault } = field.write;
  return applyDecorators(
    ...(required ? [] : [field.nullable ? IsOptional() : OptionalButNotNull()]),
    ...field.kind.validators,
    ApiProperty({
      ...field.kind.schema,
      required,
      ...(field.nullable ? { nullable: true } : {}),
      ...(byDefault !== undefined && byDefault !== null ? { default: byDefault } : {}),
    } as never),
  );
}

/** The OpenAPI property of an answer field, from its row. */
export function shownField(field: Field): PropertyDecorator {
  return ApiProperty({ ...field.kind.schema, ...(field.nullable ? { nullable: true } : {}) } as never);
}

/**
 * A property decorator that finds its field in `table` by the property's own name (so the two
 * cannot disagree), and decorates it with `decorate(field)`. A property with no row fails at start.
 */
export function fieldDecorator(table: FieldTable, decorate: (field: Field) => PropertyDecorator): () => PropertyDecorator {
  return () => (target, key) => {
    const field = table[String(key)];
    if (!field) throw new Error(`${target.constructor.name}.${String(key)} has no row in its field table`);
    decorate(field)(target, key);
  };
}

/**
 * The SQL a table's rows derive, for the table alias `alias` (`t`, `s`). Every list of columns
 * and its values come from one array of names, so they cannot drift apart.
 */
export function fieldSql<Table extends FieldTable>(table: Table, alias: string) {
  const column = (name: keyof Table & string) => `${alias}.${table[name].column}`;
  return {
    /**
     * The columns of `names` and a function from values (by API name) to theirs, in the same
     * order, for an INSERT or `UPDATE ... SET (columns) = (values)`.
     */
    writing(names: readonly (keyof Table & string)[]) {
      return {
        columns: Prisma.raw(names.map((name) => table[name].column).join(', ')),
        values: (values: Partial<Record<keyof Table, unknown>>) =>
          Prisma.join(names.map((name) => Prisma.sql`${values[name] ?? null}::${Prisma.raw(table[name].kind.sqlType)}`)),
      };
    },
    /** The SELECT list that reads `names` under their API names (the driver's values are the API's). */
    select(names: readonly (keyof Table & string)[]): Prisma.Sql {
      return Prisma.raw(names.map((name) => `${table[name].kind.read(column(name))} AS "${name}"`).join(', '));
    },
    /** `'name', expression` pairs of the fields shown in `view`, for json_build_object. */
    jsonPairs(view: 'list' | 'detail' | 'trash'): string[] {
      return (Object.keys(table) as (keyof Table & string)[])
        .filter((name) => table[name].shown === 'list' || table[name].shown === view)
        .map((name) => `'${name}', ${table[name].kind.read(column(name))}`);
    },
  };
}

/** The API names of a table's fields that clients write, and the subset a PATCH may change. */
export function writableFields<Table extends FieldTable>(table: Table): { all: WritableField<Table>[]; patchable: PatchableField<Table>[] } {
  const names = Object.keys(table) as (keyof Table & string)[];
  return {
    all: names.filter((name) => table[name].write) as WritableField<Table>[],
    patchable: names.filter((name) => table[name].write && !table[name].write.createOnly) as PatchableField<Table>[],
  };
}

/** The fields of `table` set at creation: those sent, the others at their default. */
export function withDefaults<Table extends FieldTable>(table: Table, sent: object): FieldValues<Table, WritableField<Table>> {
  const body = sent as Record<string, unknown>;
  return Object.fromEntries(
    writableFields(table).all.map((name) => [name, body[name as string] !== undefined ? body[name as string] : (table[name].write?.default ?? null)]),
  ) as FieldValues<Table, WritableField<Table>>;
}

/** The fields of a partial update that were sent (an absent field stays as it is). */
export function sentFields<Table extends FieldTable>(table: Table, body: object): Partial<FieldValues<Table, PatchableField<Table>>> {
  const sent = body as Record<string, unknown>;
  return Object.fromEntries(
    writableFields(table)
      .patchable.filter((name) => sent[name as string] !== undefined)
      .map((name) => [name, sent[name as string]]),
  ) as Partial<FieldValues<Table, PatchableField<Table>>>;
}

/** Every written field at null: what a created entry's changes start from. */
export function nothingOf<Table extends FieldTable>(table: Table): Record<WritableField<Table>, null> {
  return Object.fromEntries(writableFields(table).all.map((name) => [name, null])) as Record<WritableField<Table>, null>;
}
