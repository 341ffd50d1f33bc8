import { cte, type Cte } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { labelJson, memberJson } from '../projects/project-resources.sql';
import { isShownIn, shownFields, type View } from '../common/fields/fields';
import { TASK_FIELDS, TASK_SQL } from './task-fields';

/**
 * What answers show of a task besides TASK_FIELDS' shown columns: the hand-written views of
 * what is not a column's value, each with the view it is shown in (as a row's `shown`), declared
 * once: taskJson builds them, the DTOs are checked against them (task.dto.ts), tests derive a
 * task's keys from them. They read the joins of TASK_VIEW_JOINS.
 */
export const TASK_RELATION_VIEWS = {
  assignee: { shown: 'list', json: `CASE WHEN a.id IS NULL THEN NULL ELSE ${memberJson('a').sql} END` },
  labels: { shown: 'list', json: `COALESCE(task_labels.labels, '[]'::json)` },
  sprint: { shown: 'list', json: `CASE WHEN s.id IS NULL THEN NULL ELSE json_build_object('id', s.id, 'name', s.name, 'status', s.status) END` },
  blocked: { shown: 'list', json: `blocked.task_id IS NOT NULL` },
  // Both directions of the dependency graph, live tasks only, oldest link first.
  dependencies: {
    shown: 'detail',
    json: `json_build_object(
      'blockedBy', COALESCE((
        SELECT json_agg(json_build_object('id', other.id, 'title', other.title, 'status', other.status) ORDER BY d.created_at, other.id)
          FROM task_dependencies d JOIN tasks other ON other.id = d.blocked_by_id
         WHERE d.task_id = t.id AND other.deleted_at IS NULL), '[]'::json),
      'blocks', COALESCE((
        SELECT json_agg(json_build_object('id', other.id, 'title', other.title, 'status', other.status) ORDER BY d.created_at, other.id)
          FROM task_dependencies d JOIN tasks other ON other.id = d.task_id
         WHERE d.blocked_by_id = t.id AND other.deleted_at IS NULL), '[]'::json))`,
  },
} as const satisfies Record<string, { shown: View; json: string }>;

/** The names of the relation views shown in `In`. */
export type ShownRelation<In extends View> = {
  [K in keyof typeof TASK_RELATION_VIEWS]: (typeof TASK_RELATION_VIEWS)[K] extends { shown: In } ? K : never;
}[keyof typeof TASK_RELATION_VIEWS];

const RELATION_NAMES = Object.keys(TASK_RELATION_VIEWS) as (keyof typeof TASK_RELATION_VIEWS)[];

/** The keys of a task's JSON in `view`: its shown fields, then its relation views. */
export function taskKeys(view: View): string[] {
  return [...shownFields(TASK_FIELDS, view), ...RELATION_NAMES.filter((name) => isShownIn(TASK_RELATION_VIEWS[name].shown, view))];
}

/**
 * The JSON shape of a task, built by PostgreSQL inside the query that reads it: the
 * one definition used by the list, the detail view, the trash and the events. Its plain fields
 * come from TASK_FIELDS (every field its rows show in that view), then TASK_RELATION_VIEWS.
 * It expects the tasks to show as a CTE named `shown` followed by TASK_VIEW_CTES, read as
 * `FROM shown t` followed by TASK_VIEW_JOINS.
 * Doing it in SQL keeps a page to one statement, whatever its size, with no per-row work
 * in JavaScript.
 */
export function taskJson(view: { detail?: boolean; trash?: boolean } = {}): Prisma.Sql {
  return TASK_JSON[view.trash ? 'trash' : view.detail ? 'detail' : 'list'];
}

function buildTaskJson(view: View): Prisma.Sql {
  const pairs = [
    ...TASK_SQL.jsonPairs(view),
    ...RELATION_NAMES.filter((name) => isShownIn(TASK_RELATION_VIEWS[name].shown, view)).map(
      (name) => `'${name}', ${TASK_RELATION_VIEWS[name].json}`,
    ),
  ];
  return Prisma.raw(`json_build_object(\n    ${pairs.join(',\n    ')}\n  )`);
}

// Built once, at start.
const TASK_JSON: Record<View, Prisma.Sql> = { list: buildTaskJson('list'), detail: buildTaskJson('detail'), trash: buildTaskJson('trash') };

/** A dependency's blocker (`blocker`) still blocks: live and not finished. The filter's `blocked` reads it too. */
export const OPEN_BLOCKER = "blocker.deleted_at IS NULL AND blocker.status NOT IN ('done', 'cancelled')";

/**
 * What a task's JSON reads besides the task itself, found once for all the tasks shown, walking
 * from them by index: their labels, and which of them wait for an unfinished live blocker. To
 * follow the CTE `shown` (`withCtes([cte('shown')`...`, ...TASK_VIEW_CTES, ...])`...``). Materialized, so that the
 * plan cannot run them once per task: with a hundred tasks (a bulk create), the generic plan of
 * ChangeLog's statement aggregated every task's labels again for each task, and a subquery per
 * task for `blocked` was run as one hash over every live task and dependency of the database
 * (together 23 of its 30 ms).
 */
export const TASK_VIEW_CTES: readonly Cte[] = [
  cte('shown_labels', { materialized: true })`
    SELECT tl.task_id, json_agg(${labelJson('l')} ORDER BY l.name, l.id) AS labels
      FROM shown JOIN task_labels tl ON tl.task_id = shown.id JOIN labels l ON l.id = tl.label_id
     GROUP BY tl.task_id`,
  cte('shown_blocked', { materialized: true })`
    SELECT DISTINCT d.task_id
      FROM shown JOIN task_dependencies d ON d.task_id = shown.id JOIN tasks blocker ON blocker.id = d.blocked_by_id
     WHERE ${Prisma.raw(OPEN_BLOCKER)}`,
];

/** The rows of a task's JSON, joined to `FROM shown t`. */
export const TASK_VIEW_JOINS = Prisma.raw(`
  LEFT JOIN memberships a ON a.id = t.assignee_id
  LEFT JOIN sprints s ON s.id = t.sprint_id
  LEFT JOIN shown_labels task_labels ON task_labels.task_id = t.id
  LEFT JOIN shown_blocked blocked ON blocked.task_id = t.id`);
