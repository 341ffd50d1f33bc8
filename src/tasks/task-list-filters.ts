import { Prisma } from '../generated/prisma/client';
import { isUuid } from '../common/ids';
import type { SearchedPageQueryDto } from '../common/pagination/page.dto';
import type { ListTasksQueryDto } from './task.dto';
import type { CompiledFilter } from './finding/filter-compiler';
import { textSearchCondition, textSearchRowCondition } from './finding/text-search';

/** Which tasks a list shows: SQL conditions on the task row `t` (TaskReader adds the project). */
export interface TaskListFilter {
  conditions: Prisma.Sql[];
  /**
   * The same conditions in a form that holds for the row images of task_list_deltas, which bring
   * a remembered total up to date; null where there is none: a label filter reads task_labels as
   * they are now, not as they were, and its totals are counted again. A search's is
   * textSearchRowCondition.
   */
  rowConditions: Prisma.Sql[] | null;
  /**
   * The conditions read the search words (`search`, `text ~`), which a comment changes without
   * raising the task list version: the list is remembered by the project's event sequence too.
   */
  readsWords: boolean;
  /** The `search` among the conditions, if any: TaskReader takes a small result's page from its matches. */
  search?: string;
  /**
   * The list is the live tasks `search` finds, with no other condition: TaskReader counts its
   * total on the search words alone (liveTextSearchCount).
   */
  searchAlone?: boolean;
}

/** The live tasks: the condition every list of GET /api/v1/tasks starts from. */
const LIVE = Prisma.sql`t.deleted_at IS NULL`;

/**
 * The list filters of GET /api/v1/tasks: live tasks only, plus every filter given, and the
 * compiled `filter` expression (FilterCompiler). One place: every filter of the contract feeds it.
 */
export function taskListFilter(query: ListTasksQueryDto, expression?: CompiledFilter): TaskListFilter {
  const conditions = [LIVE];
  if (query.status !== undefined) conditions.push(oneOf('t.status', 'task_status', query.status.split(',')));
  if (query.priority !== undefined) conditions.push(oneOf('t.priority', 'task_priority', query.priority.split(',')));
  if (query.assigneeId !== undefined) conditions.push(optionalReference('t.assignee_id', query.assigneeId));
  if (query.sprintId !== undefined) conditions.push(optionalReference('t.sprint_id', query.sprintId));
  if (query.parentId !== undefined) conditions.push(reference('t.parent_id', query.parentId));
  if (query.labelId !== undefined) {
    conditions.push(
      isUuid(query.labelId)
        ? Prisma.sql`EXISTS (SELECT 1 FROM task_labels tl WHERE tl.task_id = t.id AND tl.label_id = ${query.labelId}::uuid)`
        : Prisma.sql`false`,
    );
  }
  if (query.q) conditions.push(Prisma.sql`t.title ILIKE ${`%${escapeLikePattern(query.q)}%`}`);
  if (query.dueAfter) conditions.push(Prisma.sql`t.due_date >= ${query.dueAfter}::date`);
  if (query.dueBefore) conditions.push(Prisma.sql`t.due_date <= ${query.dueBefore}::date`);
  if (query.updatedSince) conditions.push(Prisma.sql`t.updated_at >= ${query.updatedSince}::timestamptz`);
  if (query.estimated !== undefined)
    conditions.push(query.estimated === 'true' ? Prisma.sql`t.estimate IS NOT NULL` : Prisma.sql`t.estimate IS NULL`);
  const filter = withExpression({ conditions, rowConditions: query.labelId === undefined ? conditions : null, readsWords: false }, expression);
  return searched(filter, query, filter.conditions.length === 1 && filter.conditions[0] === LIVE);
}

/** The trash: every task in it, or those `search` finds and the `filter` expression selects. */
export function trashFilter(query: SearchedPageQueryDto, expression?: CompiledFilter): TaskListFilter {
  const conditions = [Prisma.sql`t.deleted_at IS NOT NULL`];
  return searched(withExpression({ conditions, rowConditions: conditions, readsWords: false }, expression), query);
}

/** The compiled `filter` expression (FilterCompiler) joins the conditions; it may read more than the task row. */
function withExpression(filter: TaskListFilter, expression: CompiledFilter | undefined): TaskListFilter {
  if (!expression) return filter;
  return {
    conditions: [...filter.conditions, expression.condition],
    // The compiled expression has no row-image form of `text ~` (a search's is textSearchRowCondition): counted again.
    rowConditions: filter.rowConditions && expression.rowOnly && !expression.readsWords ? [...filter.rowConditions, expression.condition] : null,
    readsWords: filter.readsWords || expression.readsWords,
  };
}

/**
 * A search reads the task's words (task_search): the row images of deltas are tested with the
 * heading they hold (textSearchRowCondition). `liveOnly`: the filter is the live tasks and nothing more.
 */
function searched(filter: TaskListFilter, { search }: SearchedPageQueryDto, liveOnly = false): TaskListFilter {
  if (search === undefined) return filter;
  return {
    conditions: [...filter.conditions, textSearchCondition(search)],
    rowConditions: filter.rowConditions && [...filter.rowConditions, textSearchRowCondition(search)],
    readsWords: true,
    search,
    searchAlone: liveOnly,
  };
}

function oneOf(column: string, enumType: string, values: string[]): Prisma.Sql {
  const items = values.map((value) => Prisma.sql`${value}::${Prisma.raw(enumType)}`);
  return Prisma.sql`${Prisma.raw(column)} IN (${Prisma.join(items)})`;
}

/** `none` means "without one"; an id that is not a UUID names nothing, so it matches nothing. */
function optionalReference(column: string, value: string): Prisma.Sql {
  return value === 'none' ? Prisma.sql`${Prisma.raw(column)} IS NULL` : reference(column, value);
}

function reference(column: string, value: string): Prisma.Sql {
  return isUuid(value) ? Prisma.sql`${Prisma.raw(column)} = ${value}::uuid` : Prisma.sql`false`;
}

/** `%`, `_` and `\` in a search are literal characters, not patterns (backslash is ILIKE's escape). */
export function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
