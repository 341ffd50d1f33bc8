import { addDays, isCalendarDate, madridToday } from '../../common/dates';
import { isUuid } from '../../common/ids';
import { Prisma } from '../../generated/prisma/client';
import { TASK_PRIORITIES, TASK_STATUSES } from '../task-fields';
import { escapeLikePattern } from '../task-list-filters';
import { OPEN_BLOCKER } from '../task-view.sql';
import { textSearchCondition } from './text-search';
import { invalidFilter, type FilterOperator, type FilterValue } from './filter-parser';

/** What names of the project a field's values may be: resolved to ids before the SQL is built. */
export type Lookup = 'members' | 'labels' | 'sprints';

/** A looked-up value: an id of the project, or null for `sprint = active` without an active sprint. */
export type ResolvedId = string | null;

const EQUALITY = ['=', '!=', 'in', 'not in'] as const satisfies FilterOperator[];
const ORDER = ['<', '<=', '>', '>='] as const satisfies FilterOperator[];
const EMPTINESS = ['is empty', 'is not empty'] as const satisfies FilterOperator[];
type Order = (typeof ORDER)[number];

/**
 * How one field of the filter language becomes SQL on the task row `t`. `equals` and `compare`
 * may be SQL NULL for a task without the value (`nullable`): the compiler makes every condition
 * true or false (filter-compiler.ts), so that `!=`, `not in` and `not` take in those tasks.
 */
export interface FilterField<V> {
  operators: readonly FilterOperator[];
  /** What its values are, as the OpenAPI description of `filter` lists them. */
  takes: string;
  /** The value `value` stands for, or 400 invalid_filter at its position. */
  value(value: FilterValue, resolved: ReadonlyMap<FilterValue, ResolvedId>): V;
  lookup?: Lookup;
  /** May be SQL NULL (a task without the value): then `empty` says when. */
  nullable: boolean;
  /** It reads more than the task row (labels, dependencies, comments): totals are counted again. */
  readsOtherTables?: true;
  /** It reads the search words, which comments change: TaskListFilter.readsWords. */
  readsWords?: true;
  equals?(value: V): Prisma.Sql;
  oneOf?(values: V[]): Prisma.Sql;
  compare?(operator: Order, value: V): Prisma.Sql;
  empty?: Prisma.Sql;
  contains?(value: V): Prisma.Sql;
}

function field<V>(definition: FilterField<V>): FilterField<V> {
  // The compiler reads a nullable field's comparisons as "present and ...": it needs `empty` (at load, not at a request).
  if (definition.nullable && !definition.empty) throw new Error(`A nullable filter field needs empty: ${definition.takes}`);
  return definition;
}

const column = (name: string) => Prisma.raw(`t.${name}`);

function enumField(name: string, type: string, values: readonly string[], what: string): FilterField<string> {
  return field({
    operators: EQUALITY,
    takes: values.join(', '),
    nullable: false,
    value: (value) => {
      const word = value.text.toLowerCase();
      if (!values.includes(word)) throw invalidFilter(value.at, `expected ${what} (${values.join(', ')})`);
      return word;
    },
    equals: (value) => Prisma.sql`${column(name)} = ${value}::${Prisma.raw(type)}`,
    oneOf: (values) => Prisma.sql`${column(name)} IN (${Prisma.join(values.map((value) => Prisma.sql`${value}::${Prisma.raw(type)}`))})`,
  });
}

/** A reference column (assignee_id, sprint_id): its values are looked up by id or name. */
function referenceField(name: string, lookup: Lookup, takes: string): FilterField<ResolvedId> {
  return field({
    operators: [...EQUALITY, ...EMPTINESS],
    takes,
    lookup,
    nullable: true,
    value: (value, resolved) => resolved.get(value) ?? null,
    equals: (id) => (id === null ? Prisma.sql`false` : Prisma.sql`${column(name)} = ${id}::uuid`),
    oneOf: (ids) => idsIn(column(name), ids),
    empty: Prisma.sql`${column(name)} IS NULL`,
  });
}

function idsIn(expression: Prisma.Sql, ids: ResolvedId[]): Prisma.Sql {
  const known = ids.filter((id): id is string => id !== null);
  return known.length ? Prisma.sql`${expression} IN (${Prisma.join(known.map((id) => Prisma.sql`${id}::uuid`))})` : Prisma.sql`false`;
}

/** `today`, `today-7d`, `today+2w` or YYYY-MM-DD: a Madrid calendar day. */
const RELATIVE_DAY = /^today(?:([+-])(\d{1,5})([dw]))?$/i;

function day(value: FilterValue): string {
  const relative = RELATIVE_DAY.exec(value.text);
  if (relative) {
    const [, sign, count, unit] = relative;
    return sign ? addDays(madridToday(), (sign === '-' ? -1 : 1) * Number(count) * (unit.toLowerCase() === 'w' ? 7 : 1)) : madridToday();
  }
  if (!isCalendarDate(value.text)) throw invalidFilter(value.at, 'expected a day (YYYY-MM-DD, today, today-7d or today+2w)');
  return value.text;
}

/** The first instant of a Madrid day, or of the day after it (`after`: computed in SQL, which takes year 10000). */
const dayStart = (day: string, after = 0) => Prisma.sql`((${day}::date + ${after}::int)::timestamp AT TIME ZONE 'Europe/Madrid')`;

/** A timestamp compared by the Madrid day it falls on; comparisons against the days' first instants keep its index usable. */
function instantField(name: string, nullable: boolean): FilterField<string> {
  const at = column(name);
  return field({
    takes: `a Madrid day (YYYY-MM-DD, today, today-7d, today+2w): the day the instant falls on`,
    operators: [...EQUALITY, ...ORDER, ...(nullable ? EMPTINESS : [])],
    nullable,
    value: day,
    equals: (day) => Prisma.sql`(${at} >= ${dayStart(day)} AND ${at} < ${dayStart(day, 1)})`,
    compare: (operator, day) => {
      switch (operator) {
        case '<':
          return Prisma.sql`${at} < ${dayStart(day)}`;
        case '<=':
          return Prisma.sql`${at} < ${dayStart(day, 1)}`;
        case '>':
          return Prisma.sql`${at} >= ${dayStart(day, 1)}`;
        case '>=':
          return Prisma.sql`${at} >= ${dayStart(day)}`;
      }
    },
    empty: nullable ? Prisma.sql`${at} IS NULL` : undefined,
  });
}

function booleanField(condition: Prisma.Sql, readsOtherTables?: true): FilterField<boolean> {
  return field({
    operators: ['=', '!='],
    takes: 'true, false',
    nullable: false,
    readsOtherTables,
    value: (value) => {
      const word = value.text.toLowerCase();
      if (word !== 'true' && word !== 'false') throw invalidFilter(value.at, 'expected true or false');
      return word === 'true';
    },
    equals: (value) => (value ? condition : Prisma.sql`NOT ${condition}`),
  });
}

const NUMBER = /^-?\d{1,10}(\.\d{1,10})?$/;

/**
 * The allow-list of the filter language (decisions.md section 25): the only names a filter may
 * use, each with its operators and its SQL. The grammar takes its field names from here.
 */
export const FILTER_FIELDS = {
  status: enumField('status', 'task_status', TASK_STATUSES, 'a status'),
  priority: enumField('priority', 'task_priority', TASK_PRIORITIES, 'a priority'),
  assignee: referenceField('assignee_id', 'members', "a membershipId or a member's exact name (case-insensitive)"),
  label: field<ResolvedId>({
    operators: [...EQUALITY, ...EMPTINESS],
    takes: 'a label id or name (case-insensitive); `label = X`: the task carries X among its labels',
    lookup: 'labels',
    nullable: false,
    readsOtherTables: true,
    value: (value, resolved) => resolved.get(value) ?? null,
    // `label = X`: X is among the task's labels; never NULL, so `label != X` takes in unlabelled tasks.
    equals: (id) => labelsWhere(idsIn(Prisma.sql`tl.label_id`, [id])),
    oneOf: (ids) => labelsWhere(idsIn(Prisma.sql`tl.label_id`, ids)),
    empty: Prisma.sql`NOT ${labelsWhere(Prisma.sql`true`)}`,
  }),
  sprint: referenceField('sprint_id', 'sprints', 'a sprint id or name (case-insensitive), or `active`: the active sprint'),
  parent: field<string>({
    operators: [...EQUALITY, ...EMPTINESS],
    takes: 'a task id',
    nullable: true,
    value: (value) => {
      if (!isUuid(value.text)) throw invalidFilter(value.at, 'expected a task id');
      return value.text;
    },
    equals: (id) => Prisma.sql`t.parent_id = ${id}::uuid`,
    empty: Prisma.sql`t.parent_id IS NULL`,
  }),
  due: field<string>({
    operators: [...EQUALITY, ...ORDER, ...EMPTINESS],
    takes: 'a Madrid day: YYYY-MM-DD, today, today-7d, today+2w',
    nullable: true,
    value: day,
    equals: (day) => Prisma.sql`t.due_date = ${day}::date`,
    compare: (operator, day) => Prisma.sql`t.due_date ${Prisma.raw(operator)} ${day}::date`,
    empty: Prisma.sql`t.due_date IS NULL`,
  }),
  estimate: field<string>({
    operators: [...EQUALITY, ...ORDER, ...EMPTINESS],
    takes: 'a number of points, such as 3 or 0.5',
    nullable: true,
    value: (value) => {
      if (!NUMBER.test(value.text)) throw invalidFilter(value.at, 'expected a number of points (such as 3 or 0.5)');
      return value.text;
    },
    equals: (points) => Prisma.sql`t.estimate = ${points}::numeric`,
    compare: (operator, points) => Prisma.sql`t.estimate ${Prisma.raw(operator)} ${points}::numeric`,
    empty: Prisma.sql`t.estimate IS NULL`,
  }),
  created: instantField('created_at', false),
  updated: instantField('updated_at', false),
  completed: instantField('completed_at', true),
  blocked: booleanField(
    Prisma.sql`EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks blocker ON blocker.id = d.blocked_by_id
                        WHERE d.task_id = t.id AND ${Prisma.raw(OPEN_BLOCKER)})`,
    true,
  ),
  estimated: booleanField(Prisma.sql`t.estimate IS NOT NULL`),
  title: field<string>({
    operators: ['~'],
    takes: 'text: `title ~ "login"` is a case-insensitive substring',
    nullable: false,
    value: (value) => value.text,
    contains: (text) => Prisma.sql`t.title ILIKE ${`%${escapeLikePattern(text)}%`}`,
  }),
  text: field<string>({
    operators: ['~'],
    takes: 'a search: `text ~ "invoice"` is the `search` parameter (title, description and live comments)',
    nullable: false,
    readsOtherTables: true,
    readsWords: true,
    value: (value) => value.text,
    contains: (search) => textSearchCondition(search),
  }),
} satisfies Record<string, FilterField<unknown>>;

export type FilterFieldName = keyof typeof FILTER_FIELDS;
export const FILTER_FIELD_NAMES = Object.keys(FILTER_FIELDS) as FilterFieldName[];

function labelsWhere(condition: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM task_labels tl WHERE tl.task_id = t.id AND ${condition})`;
}

/** The `filter` query parameter's OpenAPI description: the grammar, then each field of FILTER_FIELDS with its operators. */
export const FILTER_DESCRIPTION = [
  // Swagger UI shows the first four lines and scrolls the rest: what it is and examples come first.
  "A boolean expression over the task's fields (1 to 2000 characters), combined with the other filters by AND; " +
    'e.g. `status in (todo, in_progress) and priority = urgent and sprint = active`, ' +
    '`estimated = false and sprint is empty`, `due < today and blocked = true`, `updated >= today-7d`, ' +
    '`not (label = bug or title ~ "wip")`. Reference: docs/finding-work.md, and below.',
  '',
  'Fields (operators: values):',
  '',
  ...FILTER_FIELD_NAMES.map((name) => `- \`${name}\` (${FILTER_FIELDS[name].operators.join(', ')}): ${FILTER_FIELDS[name].takes}`),
  '',
  'Keywords and field names are case-insensitive; `and` binds tighter than `or`.',
  '',
  '```',
  'expression = term { "or" term }',
  'term       = factor { "and" factor }',
  'factor     = "not" factor | "(" expression ")" | field test',
  'test       = ("=" | "!=" | "<" | "<=" | ">" | ">=" | "~") value',
  '           | "in" list | "not in" list | "is empty" | "is not empty"',
  'list       = "(" value { "," value } ")"',
  "value      = bare-word | '\"' text with \\\" and \\\\ '\"'",
  '```',
  '',
  '`!=` and `not in` include tasks without the value; `<`, `<=`, `>`, `>=` never match a missing value; ' +
    '`not e` matches exactly the tasks `e` does not. Deeper than 16 parentheses or more than 100 conditions, ' +
    'a name that matches no or several rows, or anything the grammar does not take: 400 `invalid_filter` with `position`, ' +
    'the 0-based offset of the first character that does not fit.',
].join('\n');
