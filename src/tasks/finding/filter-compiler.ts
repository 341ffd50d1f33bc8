import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../database/prisma.service';
import { statement } from '../../database/sql';
import { Prisma } from '../../generated/prisma/client';
import { FILTER_FIELD_NAMES, FILTER_FIELDS, type FilterField, type FilterFieldName, type Lookup, type ResolvedId } from './filter-fields';
import { invalidFilter, parseFilter, type FilterCondition, type FilterNode, type FilterValue } from './filter-parser';

/** A filter expression as SQL on the task row `t`, and what it reads besides (TaskListFilter.rowConditions, readsWords). */
export interface CompiledFilter {
  condition: Prisma.Sql;
  rowOnly: boolean;
  readsWords: boolean;
}

/** The tables names are looked up in, and what an error calls their rows. */
const LOOKUPS: Record<Lookup, { table: string; what: string; id: string }> = {
  members: { table: 'memberships', what: 'member', id: 'membershipId' },
  labels: { table: 'labels', what: 'label', id: 'label id' },
  sprints: { table: 'sprints', what: 'sprint', id: 'sprint id' },
};

/**
 * The `filter` of the task list and the trash (decisions.md section 25): parsed (filter.peggy),
 * its names looked up in the caller's project, then compiled over the allow-list FILTER_FIELDS.
 * No text of the expression reaches the SQL but as a parameter.
 */
@Injectable()
export class FilterCompiler {
  constructor(private readonly prisma: PrismaService) {}

  /** The `filter` query parameter of the caller's project as SQL; undefined when none was sent. */
  async compile(projectId: string, text: string | undefined): Promise<CompiledFilter | undefined> {
    if (text === undefined) return undefined;
    const tree = parseFilter(text, FILTER_FIELD_NAMES);
    const conditions = conditionsOf(tree);
    for (const condition of conditions) checkOperator(condition);
    const resolved = await this.resolve(projectId, conditions);
    return {
      condition: toSql(tree, resolved),
      rowOnly: !conditions.some((condition) => ruleOf(condition).readsOtherTables),
      readsWords: conditions.some((condition) => ruleOf(condition).readsWords),
    };
  }

  /**
   * The ids that the values of looked-up fields name: an id of the project, else the one row
   * whose name equals the value case-insensitively (none or several: 400). `sprint = active` is
   * the active sprint, if any. One statement per kind of name the filter uses.
   */
  private async resolve(projectId: string, conditions: FilterCondition[]): Promise<Map<FilterValue, ResolvedId>> {
    const resolved = new Map<FilterValue, ResolvedId>();
    const byLookup = new Map<Lookup, FilterValue[]>();
    for (const condition of conditions) {
      const lookup = ruleOf(condition).lookup;
      if (lookup) byLookup.set(lookup, [...(byLookup.get(lookup) ?? []), ...condition.values]);
    }
    for (const [lookup, values] of byLookup) {
      const { table, what, id } = LOOKUPS[lookup];
      const texts = [...new Set(values.map((value) => value.text))];
      const rows = await this.prisma.sql.rows(
        statement<{ text: string; id: string; by_id: boolean; active: boolean }>(Prisma.sql`
          SELECT v.text, r.id::text AS id, r.id::text = v.text AS by_id,
                 ${lookup === 'sprints' ? Prisma.sql`r.status = 'active' AND lower(v.text) = 'active'` : Prisma.sql`false`} AS active
            FROM unnest(${texts}::text[]) AS v(text)
            JOIN ${Prisma.raw(table)} r ON r.project_id = ${projectId}::uuid
             AND (r.id::text = v.text OR lower(r.name) = lower(v.text)
                  ${lookup === 'sprints' ? Prisma.sql`OR (lower(v.text) = 'active' AND r.status = 'active')` : Prisma.empty})`),
      );
      for (const value of values) {
        const matches = rows.filter((row) => row.text === value.text);
        const exact = matches.find((row) => row.by_id) ?? matches.find((row) => row.active);
        if (exact) resolved.set(value, exact.id);
        else if (lookup === 'sprints' && value.text.toLowerCase() === 'active') resolved.set(value, null);
        else if (matches.length === 1) resolved.set(value, matches[0].id);
        else if (matches.length === 0) throw invalidFilter(value.at, `no ${what} has the ${id} or name ${JSON.stringify(value.text)}`);
        else throw invalidFilter(value.at, `${matches.length} ${what}s are named ${JSON.stringify(value.text)}: use a ${id}`);
      }
    }
    return resolved;
  }
}

function ruleOf(condition: FilterCondition): FilterField<unknown> {
  return FILTER_FIELDS[condition.field.name as FilterFieldName];
}

function conditionsOf(node: FilterNode): FilterCondition[] {
  switch (node.kind) {
    case 'condition':
      return [node];
    case 'not':
    case 'group':
      return conditionsOf(node.item);
    default:
      return node.items.flatMap(conditionsOf);
  }
}

function checkOperator(condition: FilterCondition): void {
  const { operators } = ruleOf(condition);
  if (!operators.includes(condition.operator)) {
    throw invalidFilter(condition.operatorAt, `expected an operator of ${condition.field.name} (${operators.join(', ')})`);
  }
}

function toSql(node: FilterNode, resolved: ReadonlyMap<FilterValue, ResolvedId>): Prisma.Sql {
  switch (node.kind) {
    case 'condition':
      return conditionSql(node, resolved);
    case 'not':
      return Prisma.sql`NOT ${toSql(node.item, resolved)}`;
    case 'group':
      return toSql(node.item, resolved);
    default:
      return Prisma.sql`(${Prisma.join(
        node.items.map((item) => toSql(item, resolved)),
        node.kind === 'and' ? ' AND ' : ' OR ',
      )})`;
  }
}

/**
 * One condition, simply true or false for every task (no SQL NULL): a task without the value
 * fails `=`, `in` and the comparisons, so it passes `!=`, `not in` and `not` (section 25).
 */
function conditionSql(condition: FilterCondition, resolved: ReadonlyMap<FilterValue, ResolvedId>): Prisma.Sql {
  const rule = ruleOf(condition);
  const values = condition.values.map((value) => rule.value(value, resolved));
  // NULL only where the value is missing, so ANDed with its presence it is false there: unlike
  // COALESCE(..., false), the comparison stays one an index on the column can serve.
  const known = (sql: Prisma.Sql) => (rule.nullable ? Prisma.sql`(${sql} AND NOT (${rule.empty!}))` : Prisma.sql`(${sql})`);
  const oneOf = () =>
    rule.oneOf
      ? rule.oneOf(values)
      : Prisma.join(
          values.map((value) => rule.equals!(value)),
          ' OR ',
          '(',
          ')',
        );
  switch (condition.operator) {
    case '=':
      return known(rule.equals!(values[0]));
    case '!=':
      return Prisma.sql`NOT ${known(rule.equals!(values[0]))}`;
    case 'in':
      return known(oneOf());
    case 'not in':
      return Prisma.sql`NOT ${known(oneOf())}`;
    case '<':
    case '<=':
    case '>':
    case '>=':
      return known(rule.compare!(condition.operator, values[0]));
    case 'is empty':
      return Prisma.sql`(${rule.empty!})`;
    case 'is not empty':
      return Prisma.sql`NOT (${rule.empty!})`;
    case '~':
      return Prisma.sql`(${rule.contains!(values[0])})`;
  }
}
