import type { Change } from '../changes/change';
import { CHANGE_TIME } from '../changes/change';
import { isoTimestamp } from '../common/dates';
import { Prisma } from '../generated/prisma/client';

/**
 * The sprint ledger and what reads it (decisions.md section 19).
 *
 * The ledger (`sprint_ledger`) holds, for the project's active sprint, the state of each task of
 * its scope each time that state changes: whether the task is in the scope (live and in the
 * sprint), its estimate, its status and its title, at the change's time. At activation, one
 * `committed` row per task in the scope; after it, one `changed` row whenever a task enters or
 * leaves the scope, is re-estimated or changes status while in it; at close, the open tasks the
 * close moves out leave with `carried_over`. ChangeLog.record writes these rows in the change's
 * own transaction, after the change's writes (`sprintLedger`), and at a close the frozen report
 * (`freezeReport`), which the `sprint.closed` event then carries.
 *
 * Reports (`reportSql`) and burndowns (`burndownSql`) are computed from the ledger alone, plus the
 * tasks' current titles and ranks: nothing replays history. A closed sprint's report is the one
 * frozen at its close; its burndown reads ledger rows that no later change adds to.
 */

/**
 * The statements that bring the ledger up to date with `change` (its writes sent before them), or
 * none when the change touches no task and activates and closes no sprint.
 */
export function sprintLedger(change: Change): Prisma.Sql[] {
  const taskIds = change.records.flatMap((record) => ('task' in record ? [record.task] : []));
  const sprintsThat = (action: 'activated' | 'closed') =>
    change.records.flatMap((record) => ('sprint' in record && record.action === action ? [record.sprint] : []));
  const [activated, closed] = [sprintsThat('activated'), sprintsThat('closed')];
  if (taskIds.length === 0 && activated.length === 0 && closed.length === 0) return [];
  const project = Prisma.sql`${change.projectId}::uuid`;
  const rows = Prisma.sql`
    WITH tracked AS (
      -- The project's active sprint, or the one this change closes (its open tasks leave with the close).
      SELECT s.id, s.id = ANY(${closed}::uuid[]) AS closing FROM sprints s
       WHERE s.project_id = ${project} AND (s.status = 'active' OR s.id = ANY(${closed}::uuid[]))
         AND NOT s.id = ANY(${activated}::uuid[])
    ),
    committed AS (
      INSERT INTO sprint_ledger (project_id, sprint_id, task_id, kind, in_scope, estimate, status, title, at)
      SELECT t.project_id, t.sprint_id, t.id, 'committed', true, t.estimate, t.status, t.title, ${CHANGE_TIME}
        FROM tasks t WHERE t.project_id = ${project} AND t.sprint_id = ANY(${activated}::uuid[]) AND t.deleted_at IS NULL
    ),
    state AS (
      SELECT tr.id AS sprint_id, tr.closing, x.id AS task_id, t.id IS NOT NULL AS still_there,
             COALESCE(t.deleted_at IS NULL AND t.sprint_id = tr.id, false) AS in_scope, t.estimate, t.status, t.title,
             last.in_scope AS was_in, last.estimate AS was_estimate, last.status AS was_status, last.title AS was_title
        FROM tracked tr
       CROSS JOIN unnest(${taskIds}::uuid[]) AS x(id)
        LEFT JOIN tasks t ON t.id = x.id AND t.project_id = ${project}
        LEFT JOIN LATERAL (
          SELECT l.in_scope, l.estimate, l.status, l.title FROM sprint_ledger l
           WHERE l.sprint_id = tr.id AND l.task_id = x.id ORDER BY l.id DESC LIMIT 1
        ) last ON true
    )
    INSERT INTO sprint_ledger (project_id, sprint_id, task_id, kind, in_scope, carried_over, estimate, status, title, at)
    SELECT ${project}, s.sprint_id, s.task_id, 'changed', s.in_scope, s.closing AND NOT s.in_scope,
           CASE WHEN s.still_there THEN s.estimate ELSE s.was_estimate END, COALESCE(s.status, s.was_status),
           COALESCE(s.title, s.was_title), ${CHANGE_TIME}
      FROM state s
     WHERE (s.in_scope OR COALESCE(s.was_in, false))
       AND (s.was_in IS NULL OR s.in_scope <> s.was_in OR s.estimate IS DISTINCT FROM s.was_estimate OR s.status IS DISTINCT FROM s.was_status)`;
  return [rows, ...closed.map((sprintId) => freezeReport(change.projectId, sprintId))];
}

/** At a close, after the ledger's rows: the report as it stands at the close, kept for ever. */
function freezeReport(projectId: string, sprintId: string): Prisma.Sql {
  return Prisma.sql`UPDATE sprints SET report = (${reportSql(projectId, sprintId)}) WHERE id = ${sprintId}::uuid`;
}

/** A tally of the tasks for which `when` holds: `{tasks, points, unestimated}`, points the sum of `estimate` (null counts 0). */
function tally(when: string, estimate: string): string {
  return `json_build_object('tasks', count(*) FILTER (WHERE ${when}),
           'points', COALESCE(sum(${estimate}) FILTER (WHERE ${when}), 0)::float8,
           'unestimated', count(*) FILTER (WHERE (${when}) AND ${estimate} IS NULL))`;
}

/** SQL for the tally of the scope committed at the activation of the sprint `sprint` (an SQL expression): `sprint.activated` carries it. */
export function committedSql(sprint: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(SELECT ${Prisma.raw(tally('true', 'l.estimate'))} FROM sprint_ledger l WHERE l.sprint_id = ${sprint} AND l.kind = 'committed')`;
}

/**
 * A sprint's report as `GET .../report` answers it (one row, column `report`; none when the sprint
 * is not the project's), computed now. A planned sprint's has only `scope` and `tasks`, from its
 * live tasks; an active or closed sprint's reads the ledger. What each tally counts:
 * decisions.md section 19; a task's title, status and estimate in `tasks` are as the task is now
 * (at the close, when frozen), or as the ledger last saw it if it was destroyed.
 */
export function reportSql(projectId: string, sprintId: string): Prisma.Sql {
  const fromLedger = Prisma.sql`
    SELECT p.*, NOT p.committed AND p.entered AS added, (p.committed OR p.entered) AND NOT p.in_end AS removed, t.rank,
           COALESCE(t.title, p.last_title) AS title,
           CASE WHEN p.in_end OR t.id IS NULL THEN p.last_status ELSE t.status END AS status,
           CASE WHEN p.in_end OR t.id IS NULL THEN p.last_estimate ELSE t.estimate END AS estimate
      FROM (
        SELECT o.task_id,
               bool_or(o.kind = 'committed') AS committed,
               (array_agg(o.estimate ORDER BY o.id) FILTER (WHERE o.kind = 'committed'))[1] AS committed_estimate,
               bool_or(o.kind = 'changed' AND o.in_scope AND NOT COALESCE(o.was_in, false)) AS entered,
               (array_agg(o.estimate ORDER BY o.id DESC) FILTER (WHERE o.kind = 'changed' AND o.in_scope AND NOT COALESCE(o.was_in, false)))[1] AS entered_estimate,
               (array_agg(o.estimate ORDER BY o.id DESC) FILTER (WHERE NOT o.in_scope AND NOT o.carried_over AND COALESCE(o.was_in, false)))[1] AS left_estimate,
               COALESCE(sum(COALESCE(o.estimate, 0) - COALESCE(o.was_estimate, 0)) FILTER (WHERE o.kind = 'changed' AND o.in_scope AND o.was_in), 0) AS reestimated,
               (array_agg(o.in_scope OR o.carried_over ORDER BY o.id DESC))[1] AS in_end,
               (array_agg(o.carried_over ORDER BY o.id DESC))[1] AS carried_over,
               (array_agg(o.estimate ORDER BY o.id DESC))[1] AS last_estimate,
               (array_agg(o.status ORDER BY o.id DESC))[1] AS last_status,
               (array_agg(o.title ORDER BY o.id DESC))[1] AS last_title
          FROM (
            SELECT l.*, lag(l.in_scope) OVER w AS was_in, lag(l.estimate) OVER w AS was_estimate
              FROM sprint_ledger l WHERE l.sprint_id = ${sprintId}::uuid
            WINDOW w AS (PARTITION BY l.task_id ORDER BY l.id)
          ) o
         GROUP BY o.task_id
      ) p
      LEFT JOIN tasks t ON t.id = p.task_id`;
  const planned = Prisma.sql`
    SELECT t.id AS task_id, false AS committed, NULL::numeric AS committed_estimate, false AS entered, NULL::numeric AS entered_estimate,
           NULL::numeric AS left_estimate, 0::numeric AS reestimated, true AS in_end, false AS carried_over, t.estimate AS last_estimate,
           t.status AS last_status, t.title AS last_title, false AS added, false AS removed, t.rank, t.title, t.status, t.estimate
      FROM tasks t WHERE t.sprint_id = ${sprintId}::uuid AND t.deleted_at IS NULL`;
  const task = `json_build_object('id', c.task_id, 'title', c.title, 'committed', c.committed, 'added', c.added, 'removed', c.removed,
                  'carriedOver', c.carried_over, 'status', c.status, 'estimate', c.estimate::float8)`;
  const unlessPlanned = (sql: string) => `CASE WHEN s.status = 'planned' THEN NULL ELSE ${sql} END`;
  return Prisma.sql`
    SELECT json_build_object(
             'sprintId', s.id,
             'status', s.status,
             'activatedAt', ${Prisma.raw(isoTimestamp('s.activated_at'))},
             'closedAt', ${Prisma.raw(isoTimestamp('s.closed_at'))},
             'committed', ${Prisma.raw(unlessPlanned(tally('c.committed', 'c.committed_estimate')))},
             'added', ${Prisma.raw(unlessPlanned(tally('c.added', 'c.entered_estimate')))},
             'removed', ${Prisma.raw(unlessPlanned(tally('c.removed', 'c.left_estimate')))},
             'reestimated', ${Prisma.raw(unlessPlanned('COALESCE(sum(c.reestimated), 0)::float8'))},
             'completed', ${Prisma.raw(unlessPlanned(tally("c.in_end AND c.status = 'done'", 'c.estimate')))},
             'cancelled', ${Prisma.raw(unlessPlanned(tally("c.in_end AND c.status = 'cancelled'", 'c.estimate')))},
             'carriedOver', ${Prisma.raw(`CASE WHEN s.status = 'closed' THEN ${tally('c.carried_over', 'c.estimate')} END`)},
             'scope', ${Prisma.raw(tally('c.in_end', 'c.estimate'))},
             'tasks', COALESCE(json_agg(${Prisma.raw(task)} ORDER BY c.rank NULLS LAST, c.task_id) FILTER (WHERE c.task_id IS NOT NULL), '[]'::json)
           ) AS report
      FROM sprints s
      LEFT JOIN LATERAL (
        ${fromLedger} WHERE s.status <> 'planned'
        UNION ALL
        ${planned} AND s.status = 'planned'
      ) c ON true
     WHERE s.id = ${sprintId}::uuid AND s.project_id = ${projectId}::uuid
     GROUP BY s.id`;
}

/**
 * A sprint's burndown (one row, column `burndown`: `{days}`), from its activation day to its
 * close day or today, in Madrid days; each day's tallies at the end of that day (today: now; the
 * close day: at the close, before its open tasks moved out). Null for a planned sprint.
 */
export function burndownSql(projectId: string, sprintId: string): Prisma.Sql {
  const scope = tally('x.in_scope', 'x.estimate');
  const completed = tally("x.in_scope AND x.status = 'done'", 'x.estimate');
  return Prisma.sql`
    WITH sprint AS (
      SELECT s.id, s.activated_at, COALESCE(s.closed_at, now()) AS until FROM sprints s
       WHERE s.id = ${sprintId}::uuid AND s.project_id = ${projectId}::uuid AND s.activated_at IS NOT NULL
    ),
    days AS (
      SELECT d::date AS day,
             LEAST(((d + interval '1 day') AT TIME ZONE 'Europe/Madrid') - interval '1 millisecond', s.until) AS until
        FROM sprint s,
             -- Madrid midnights, as timestamps without a zone: day + 1 at Madrid is then the instant the day ends.
             generate_series((s.activated_at AT TIME ZONE 'Europe/Madrid')::date::timestamp, (s.until AT TIME ZONE 'Europe/Madrid')::date::timestamp,
                             interval '1 day') d
    ),
    per_day AS (
      SELECT d.day, ${Prisma.raw(scope)} AS scope, ${Prisma.raw(completed)} AS completed
        FROM days d
        LEFT JOIN LATERAL (
          SELECT DISTINCT ON (l.task_id) l.in_scope OR l.carried_over AS in_scope, l.estimate, l.status
            FROM sprint_ledger l WHERE l.sprint_id = ${sprintId}::uuid AND l.at <= d.until
           ORDER BY l.task_id, l.id DESC
        ) x ON true
       GROUP BY d.day
    )
    SELECT json_build_object('days', COALESCE((
             SELECT json_agg(json_build_object(
                      'date', to_char(p.day, 'YYYY-MM-DD'),
                      'scope', p.scope,
                      'completed', p.completed,
                      'remaining', json_build_object(
                        'tasks', (p.scope->>'tasks')::int - (p.completed->>'tasks')::int,
                        'points', (p.scope->>'points')::float8 - (p.completed->>'points')::float8,
                        'unestimated', (p.scope->>'unestimated')::int - (p.completed->>'unestimated')::int))
                    ORDER BY p.day)
               FROM per_day p), '[]'::json)) AS burndown
      FROM sprint`;
}

/**
 * The project's last `last` closed sprints, most recently closed first, each with what its frozen
 * report committed and completed, and the mean of their completed tasks and points (0 with none).
 */
export function velocitySql(projectId: string, last: number): Prisma.Sql {
  return Prisma.sql`
    WITH closed AS (
      SELECT s.id, s.name, s.closed_at, s.report FROM sprints s
       WHERE s.project_id = ${projectId}::uuid AND s.status = 'closed' AND s.report IS NOT NULL
       ORDER BY s.closed_at DESC, s.id DESC LIMIT ${last}
    )
    SELECT json_build_object(
             'sprints', COALESCE(json_agg(json_build_object('id', c.id, 'name', c.name, 'closedAt', ${Prisma.raw(isoTimestamp('c.closed_at'))},
                                                            'committed', c.report->'committed', 'completed', c.report->'completed')
                                 ORDER BY c.closed_at DESC, c.id DESC), '[]'::json),
             'average', json_build_object('tasks', COALESCE(avg((c.report->'completed'->>'tasks')::float8), 0),
                                          'points', COALESCE(avg((c.report->'completed'->>'points')::float8), 0))
           ) AS velocity
      FROM closed c`;
}
