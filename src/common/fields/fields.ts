import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IsIn, IsInt, IsNumber, IsOptional, IsString, Max, Min } from 'class-validator';
import { Prisma } from '../../generated/prisma/client';
import { isoTimestamp } from '../dates';
import { HTTP_URL_PATTERN, IsCalendarDate, IsHttpUrl, IsNotBlank, IsText, OptionalButNotNull } from '../validation/validators';

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
  /**
   * What the database holds of the kind, so that it refuses what the API refuses: the column's
   * type as PostgreSQL writes it (format_type: `character varying(200)`, `numeric(5,1)`), and
   * the CHECK predicates on the column (`"estimate"`) that the type alone does not hold, by the
   * suffix of their constraint's name (`<table>_<column>_<suffix>`). src/common/fields/field-rules.ts
   * compares them with the database; `npm run db:migration` writes the migration they need.
   */
  readonly columnType: string;
  checks(column: string): Readonly<Record<string, string>>;
  /** Never set: carries the type of the values (Value<...>). */
  readonly type?: T;
}

const NO_CHECKS = () => ({});
const quoted = (column: string) => `"${column}"`;

/** The TypeScript type of a field kind's values. */
export type KindValue<K> = K extends FieldKind<infer T> ? T : never;

/**
 * Text of `min` to `max` code points (decisions.md: lengths count code points), in a
 * `VarChar(max)` column (PostgreSQL counts characters, that is code points, too).
 */
export function text(min: number, max: number, options: { notBlank?: boolean } = {}): FieldKind<string> {
  return {
    sqlType: 'text',
    read: (column) => column,
    schema: { type: 'string', ...(min > 0 ? { minLength: min } : {}), maxLength: max },
    validators: [IsString(), IsText(min, max), ...(options.notBlank ? [IsNotBlank()] : [])],
    columnType: `character varying(${max})`,
    // Not blank implies one character at least.
    checks: (column) => ({
      ...(options.notBlank ? { not_blank: `${quoted(column)} ~ '[^[:space:]]'` } : {}),
      ...(min > (options.notBlank ? 1 : 0) ? { min_length: `char_length(${quoted(column)}) >= ${min}` } : {}),
    }),
  };
}

/**
 * An absolute http or https URL of at most `max` characters, as RFC 3986 writes it (ASCII:
 * other characters percent-encoded), with a host; stored as sent. The database holds the same
 * pattern (HTTP_URL_PATTERN); the API also refuses what a WHATWG URL parser refuses (a port
 * above 65535, say).
 */
export function url(max: number): FieldKind<string> {
  return {
    sqlType: 'text',
    read: (column) => column,
    schema: { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: max },
    validators: [IsString(), IsText(0, max), IsHttpUrl()],
    columnType: `character varying(${max})`,
    checks: (column) => ({ http_url: `${quoted(column)} ~* '${HTTP_URL_PATTERN.replaceAll("'", "''")}'` }),
  };
}

/** One of `values`, stored as the database enum `sqlType` (which holds them: no CHECK). */
export function oneOf<T extends string>(values: readonly T[], sqlType: string): FieldKind<T> {
  return {
    sqlType,
    read: (column) => `${column}::text`,
    schema: { type: 'string', enum: [...values] },
    validators: [IsIn(values, { message: `must be one of: ${values.join(', ')}` })],
    columnType: sqlType,
    checks: NO_CHECKS,
  };
}

/**
 * The id of another record of the project. Any string is accepted here: one that is not an
 * id of the project is answered 404 by the reference check, as an unknown id is.
 */
export function reference(): FieldKind<string> {
  return {
    sqlType: 'uuid',
    read: (column) => `${column}::text`,
    schema: { type: 'string', format: 'uuid' },
    validators: [IsString()],
    columnType: 'uuid',
    checks: NO_CHECKS,
  };
}

/** A calendar day, YYYY-MM-DD (a civil day in Madrid). */
export function calendarDate(): FieldKind<string> {
  return {
    sqlType: 'date',
    read: (column) => `to_char(${column}, 'YYYY-MM-DD')`,
    schema: { type: 'string', format: 'date' },
    validators: [IsCalendarDate()],
    columnType: 'date',
    checks: NO_CHECKS,
  };
}

/** An instant, as the contract writes them (UTC, milliseconds). Written by the service only. */
export function instant(): FieldKind<string> {
  return {
    sqlType: 'timestamptz',
    read: isoTimestamp,
    schema: { type: 'string', format: 'date-time' },
    validators: [],
    columnType: 'timestamp(3) with time zone',
    checks: NO_CHECKS,
  };
}

/** A record's id. Written by the service only. */
export function id(): FieldKind<string> {
  return {
    sqlType: 'uuid',
    read: (column) => column,
    schema: { type: 'string', format: 'uuid' },
    validators: [],
    columnType: 'uuid',
    checks: NO_CHECKS,
  };
}

/** A JSON document the service writes and answers as stored (a frozen sprint report). */
export function json(): FieldKind<unknown> {
  return { sqlType: 'json', read: (column) => column, schema: { type: 'object' }, validators: [], columnType: 'json', checks: NO_CHECKS };
}

/**
 * An opaque key of 1 to `max` printable ASCII characters that sorts byte by byte (a task's
 * rank: its column is `COLLATE "C"`). Written by the service only.
 */
export function asciiKey(max: number): FieldKind<string> {
  return {
    sqlType: 'text',
    read: (column) => column,
    schema: { type: 'string', minLength: 1, maxLength: max },
    validators: [],
    columnType: `character varying(${max})`,
    checks: (column) => ({ ascii: `${quoted(column)} ~ '^[!-~]{1,${max}}$'` }),
  };
}

/**
 * A number from `min` to `max` with at most `decimals` decimal places, stored as
 * `numeric(p, decimals)` (p: the digits `max` needs, and the decimals).
 */
export function decimal(min: number, max: number, decimals: number): FieldKind<number> {
  const places = `at most ${decimals} decimal place${decimals === 1 ? '' : 's'}`;
  return {
    sqlType: 'numeric',
    // float8: a JSON number without trailing zeros (3, not 3.0), and a number from the driver.
    read: (column) => `${column}::float8`,
    schema: { type: 'number', minimum: min, maximum: max, description: places },
    validators: [
      IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: decimals }, { message: `must be a number with ${places}` }),
      Min(min, { message: `must be from ${min} to ${max}` }),
      Max(max, { message: `must be from ${min} to ${max}` }),
    ],
    columnType: `numeric(${String(Math.trunc(Math.max(Math.abs(min), Math.abs(max)))).length + decimals},${decimals})`,
    checks: (column) => ({ range: `${quoted(column)} >= ${min} AND ${quoted(column)} <= ${max}` }),
  };
}

/** A whole number from `min` to `max`, stored as `integer` (`Int` in schema.prisma). */
export function integer(min: number, max: number): FieldKind<number> {
  return {
    sqlType: 'integer',
    read: (column) => column,
    schema: { type: 'integer', minimum: min, maximum: max },
    validators: [
      IsInt({ message: 'must be a whole number' }),
      Min(min, { message: `must be from ${min} to ${max}` }),
      Max(max, { message: `must be from ${min} to ${max}` }),
    ],
    columnType: 'integer',
    checks: (column) => ({ range: `${quoted(column)} >= ${min} AND ${quoted(column)} <= ${max}` }),
  };
}

/** The views of a resource that answers show: `list` (every answer), `detail` (not in lists), `trash` (only as the trash lists it). */
export type View = 'list' | 'detail' | 'trash';

/**
 * Whether and where answers show a field under its API name: in a view (`list`: every answer),
 * or `{ not: why }`, a deliberate choice with its reason (shown through a hand-written view, as
 * `assigneeId` is as `assignee`, or the service's own bookkeeping).
 */
export type Shown = View | { readonly not: string };

/**
 * Who writes a field: clients (`default`, its value at creation when the body leaves it out;
 * none: the body must send it; `createOnly`, a PATCH may not change it; `clearable: false`, a
 * body may not send null though the column holds null for the service's own reasons, as a
 * deleted comment's text), or `'service'` alone.
 */
export type Written<T> = { readonly default?: T | null; readonly createOnly?: boolean; readonly clearable?: false } | 'service';

/**
 * One column of a resource's table. `write` and `shown` are required, so that a field written
 * but never shown, or shown but never written, is a choice the row declares.
 */
export interface Field<T = unknown> {
  /** The column, in snake_case. */
  readonly column: string;
  readonly kind: FieldKind<T>;
  /** The column may be NULL (as schema.prisma says: TableOf checks it); for a field clients write, null clears it. */
  readonly nullable?: boolean;
  readonly write: Written<T>;
  readonly shown: Shown;
}

/** Whether a field or view shown as `shown` is in the answers of `view`: what `list` shows every view shows. */
export function isShownIn(shown: Shown, view: View): boolean {
  return shown === 'list' || shown === view;
}

/** What clients may write of a field: its `write`, or null when the service alone writes it. */
export function clientWrite(field: Field): Exclude<Written<unknown>, 'service'> | null {
  return field.write === 'service' ? null : field.write;
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
export type ShownField<Table extends FieldTable, In extends View> = {
  [K in keyof Table]: Table[K] extends { shown: In } ? K : never;
}[keyof Table];

/** The values of `Table`'s fields `K`, as the API names them. */
export type FieldValues<Table extends FieldTable, K extends keyof Table = keyof Table> = { [P in K]: FieldValue<Table[P]> };

/**
 * Compiles only when A (the keys of `What`, a DTO) and B (what its field table says it must have)
 * are the same set: `const check: SameKeys<keyof Dto, ..., 'Dto'> = true` fails the build when
 * they disagree, with a message that names the keys (`{ "CreateTaskDto lacks": "externalUrl" }`).
 */
export type SameKeys<A, B, What extends string = 'the DTO'> = [A] extends [B]
  ? [B] extends [A]
    ? true
    : { [K in `${What} lacks`]: Exclude<B, A> }
  : { [K in `${What} has beyond its field table`]: Exclude<A, B> };

/**
 * The class-validator rules and OpenAPI property of a body field, from its row: absent is
 * allowed unless the field has no default; null only where it is nullable.
 */
export function bodyField(field: Field): PropertyDecorator {
  const write = clientWrite(field);
  if (!write) throw new Error(`${field.column} is not written by clients (its row says write: 'service')`);
  const required = !('default' in write);
  const { default: byDefault } = write;
  const takesNull = field.nullable && write.clearable !== false;
  return applyDecorators(
    ...(required ? [] : [takesNull ? IsOptional() : OptionalButNotNull()]),
    ...field.kind.validators,
    ApiProperty({
      ...field.kind.schema,
      required,
      ...(takesNull ? { nullable: true } : {}),
      ...(byDefault !== undefined && byDefault !== null ? { default: byDefault } : {}),
    } as never),
  );
}

/** The OpenAPI property of an answer field, from its row. */
export function shownField(field: Field): PropertyDecorator {
  return ApiProperty({ ...field.kind.schema, ...(field.nullable ? { nullable: true } : {}) } as never);
}

/** A class, as decorators see it. */
type Class = abstract new (...args: never[]) => unknown;

/** A property decorator made by fieldDecorator, which knows the properties it decorated. */
export interface FieldDecorator {
  (): PropertyDecorator;
  /** Its name, for messages (`TaskBodyField`). */
  readonly decoratorName: string;
  /** The properties of `target` (a class) it decorated, inherited ones included. */
  decorated(target: Class): Set<string>;
}

/**
 * A property decorator that finds its field in `table` by the property's own name (so the two
 * cannot disagree), and decorates it with `decorate(field)`. A property with no row fails at start.
 */
export function fieldDecorator(table: FieldTable, decorate: (field: Field) => PropertyDecorator, decoratorName: string): FieldDecorator {
  const byClass = new Map<unknown, Set<string>>();
  const decorator = () => (target: object, key: string | symbol) => {
    const field = table[String(key)];
    if (!field) throw new Error(`${target.constructor.name}.${String(key)} has no row in its field table`);
    decorate(field)(target, key);
    const names = byClass.get(target.constructor) ?? new Set<string>();
    byClass.set(target.constructor, names.add(String(key)));
  };
  return Object.assign(decorator, {
    decoratorName,
    decorated(target: Class) {
      const names = new Set<string>();
      for (let type: unknown = target; typeof type === 'function' && type !== Function.prototype; type = Object.getPrototypeOf(type)) {
        for (const name of byClass.get(type) ?? []) names.add(name);
      }
      return names;
    },
  });
}

/**
 * Fails at start (at import) when a property of `dto` named in `names` lacks `decorator`: the
 * compiler checks that a DTO has every field's property (SameKeys), this that each carries its
 * row's validation and OpenAPI property.
 */
export function requireFieldDecorators(dto: Class, decorator: FieldDecorator, names: readonly string[], why: string): void {
  const decorated = decorator.decorated(dto);
  const missing = names.filter((name) => !decorated.has(name));
  if (missing.length) {
    throw new Error(
      `${missing.map((name) => `${dto.name}.${name}`).join(', ')} lack${missing.length === 1 ? 's' : ''} @${decorator.decoratorName}() (${why})`,
    );
  }
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
    jsonPairs(view: View): string[] {
      return shownFields(table, view).map((name) => `'${name}', ${table[name].kind.read(column(name))}`);
    },
  };
}

/** The API names of a table's fields that clients write, and the subset a PATCH may change. */
export function writableFields<Table extends FieldTable>(table: Table): { all: WritableField<Table>[]; patchable: PatchableField<Table>[] } {
  const names = Object.keys(table) as (keyof Table & string)[];
  return {
    all: names.filter((name) => clientWrite(table[name])) as WritableField<Table>[],
    patchable: names.filter((name) => clientWrite(table[name]) && !clientWrite(table[name])?.createOnly) as PatchableField<Table>[],
  };
}

/** The API names of a table's fields that answers show in `view`, in the table's order. */
export function shownFields<Table extends FieldTable>(table: Table, view: View): (keyof Table & string)[] {
  return (Object.keys(table) as (keyof Table & string)[]).filter((name) => isShownIn(table[name].shown, view));
}

/** The fields of `table` set at creation: those sent, the others at their default. */
export function withDefaults<Table extends FieldTable>(table: Table, sent: object): FieldValues<Table, WritableField<Table>> {
  const body = sent as Record<string, unknown>;
  return Object.fromEntries(
    writableFields(table).all.map((name) => [
      name,
      body[name as string] !== undefined ? body[name as string] : (clientWrite(table[name])?.default ?? null),
    ]),
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
