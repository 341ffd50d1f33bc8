import type { Change } from '../changes/change';
import { CHANGE_TIME } from '../changes/change';
import { isoTimestamp } from '../common/dates';
import { cte, withCtes, type Cte, type Statement } from '../database/sql';
import type { BurndownDto, SprintReportDto, VelocityDto } from './sprint-report.dto';
import { Prisma } from '../generated/prisma/client';
import { CARRIED_OVER, IN_SCOPE, LEDGER_RECORDS, REPORT_COUNTS, SCOPE_RULES } from './sprint-ledger-rules';

/**
 * The sprint ledger (decisions.md section 19), written in each change's own transaction:
 * `sprint_ledger`, the active sprint's timeline of its tasks' states, which burndowns read; and
 * `sprint_scope`, one row per task ever in the scope, which reports read, so that a report costs
 * one row per task rather than a pass over the timeline. Nothing replays history.
 */

/** The columns SCOPE_RULES write at `moment`, after the key (`key`, SQL) and the project. Built once. */
function scopeInsert(moment: 'activation' | 'first', key: string): { columns: Prisma.Sql; values(project: Prisma.Sql): Prisma.Sql } {
  const written = SCOPE_RULES.flatMap((rule) =>
    Object.entries(rule).flatMap(([column, at]) => (at[moment] === undefined ? [] : [[column, at[moment]] as const])),
  );
  const columns = Prisma.raw(['sprint_id', 'task_id', 'project_id', ...written.map(([column]) => column)].join(', '));
  const [sprintAndTask, rest] = [Prisma.raw(key), Prisma.raw(written.map(([, value]) => `, ${value}`).join(''))];
  return { columns, values: (project) => Prisma.sql`${sprintAndTask}, ${project}${rest}` };
}

const [IN_SCOPE_SQL, CARRIED_OVER_SQL, LEDGER_RECORDS_SQL] = [IN_SCOPE, CARRIED_OVER, LEDGER_RECORDS].map((rule) => Prisma.raw(rule));
const AT_ACTIVATION = scopeInsert('activation', 't.sprint_id, t.id');
const FIRST_SEEN = scopeInsert('first', 'm.sprint_id, m.task_id');
/** ON CONFLICT DO UPDATE's SET list: what each rule makes of a row the ledger has. Built once. */
const NEXT = Prisma.raw(
  SCOPE_RULES.flatMap((rule) => Object.entries(rule).flatMap(([column, at]) => (at.next === undefined ? [] : [`${column} = ${at.next}`]))).join(
    ',\n                ',
  ),
);

/**
 * The ledger's part of `change`: `ctes` ride at the head of ChangeLog.record's last statement (no
 * extra statement), but a close's go in `before`, since its frozen report must read their rows.
 */
export function sprintLedgerParts(change: Change): { before: Prisma.Sql[]; ctes: readonly Cte[] } {
  const taskIds = change.records.flatMap((record) => ('task' in record ? [record.task] : []));
  const sprintsThat = (action: 'activated' | 'closed') =>
    change.records.flatMap((record) => ('sprint' in record && record.action === action ? [record.sprint] : []));
  const [activated, closed] = [sprintsThat('activated'), sprintsThat('closed')];
  const project = Prisma.sql`${change.projectId}::uuid`;
  // At activation: the scope as it stands, committed (COMMITTED_AT_ACTIVATION).
  const commit =
    activated.length === 0
      ? []
      : [
          withCtes([
            cte('scope')`
              SELECT t.sprint_id, t.id, t.estimate, t.status, t.title FROM tasks t
               WHERE t.project_id = ${project} AND t.sprint_id = ANY(${activated}::uuid[]) AND t.deleted_at IS NULL`,
            cte('timeline')`
              INSERT INTO sprint_ledger (project_id, sprint_id, task_id, kind, in_scope, estimate, status, title, at)
              SELECT ${project}, t.sprint_id, t.id, 'committed', true, t.estimate, t.status, t.title, ${CHANGE_TIME} FROM scope t`,
          ])`
            INSERT INTO sprint_scope (${AT_ACTIVATION.columns})
            SELECT ${AT_ACTIVATION.values(project)} FROM scope t`,
        ];
  // After it: each task of the change whose standing in the active sprint (or the one it closes) moved.
  const follow =
    taskIds.length === 0
      ? []
      : [
          cte('ledger_tracked')`
            -- The project's active sprint, or the one this change closes (its open tasks leave with the close).
            SELECT s.id, s.id = ANY(${closed}::uuid[]) AS closing FROM sprints s
             WHERE s.project_id = ${project} AND (s.status = 'active' OR s.id = ANY(${closed}::uuid[]))
               AND NOT s.id = ANY(${activated}::uuid[])`,
          cte('ledger_state')`
            SELECT tr.id AS sprint_id, x.id AS task_id,
                   ${IN_SCOPE_SQL} AS in_scope,
                   ${CARRIED_OVER_SQL} AS carried_over,
                   -- A task destroyed by the change keeps its last known state.
                   CASE WHEN t.id IS NULL THEN was.estimate ELSE t.estimate END AS estimate,
                   COALESCE(t.status, was.status) AS status, COALESCE(t.title, was.title) AS title,
                   was.in_scope AS was_in, was.estimate AS was_estimate, was.status AS was_status
              FROM ledger_tracked tr
             CROSS JOIN unnest(${taskIds}::uuid[]) AS x(id)
              LEFT JOIN tasks t ON t.id = x.id AND t.project_id = ${project}
              LEFT JOIN sprint_scope was ON was.sprint_id = tr.id AND was.task_id = x.id`,
          cte('ledger_moved')`SELECT * FROM ledger_state s WHERE ${LEDGER_RECORDS_SQL}`,
          cte('ledger_timeline')`
            INSERT INTO sprint_ledger (project_id, sprint_id, task_id, kind, in_scope, carried_over, estimate, status, title, at)
            SELECT ${project}, m.sprint_id, m.task_id, 'changed', m.in_scope, m.carried_over, m.estimate, m.status, m.title, ${CHANGE_TIME}
              FROM ledger_moved m`,
          cte('ledger_scope')`
            INSERT INTO sprint_scope AS c (${FIRST_SEEN.columns})
            SELECT ${FIRST_SEEN.values(project)} FROM ledger_moved m
            ON CONFLICT (sprint_id, task_id) DO UPDATE SET
              ${NEXT}`,
        ];
  const freeze = closed.map((sprintId) => freezeReport(change.projectId, sprintId));
  if (closed.length === 0) return { before: commit, ctes: follow };
  return { before: [...commit, ...(follow.length === 0 ? [] : [standalone(follow)]), ...freeze], ctes: [] };
}

/** sprintLedgerParts as statements of their own, in order (bench/sprint-replay.js writes the ledger so). */
export function sprintLedger(change: Change): Prisma.Sql[] {
  const { before, ctes } = sprintLedgerParts(change);
  return ctes.length === 0 ? before : [...before, standalone(ctes)];
}

/** Data-modifying CTEs as a statement: PostgreSQL runs them whether or not the query reads them. */
function standalone(ctes: readonly Cte[]): Prisma.Sql {
  return withCtes(ctes)`SELECT NULL`;
}

/**
 * At a close, after the ledger's rows: the report as it stands at the close, kept for ever
 * (section 19: "A closed sprint's report is frozen: it never changes after the close, whatever
 * happens to its tasks later"); velocity reads its two tallies.
 */
function freezeReport(projectId: string, sprintId: string): Prisma.Sql {
  return Prisma.sql`
    UPDATE sprints SET report = r.report, closed_tallies = json_build_object('committed', r.report->'committed', 'completed', r.report->'completed')
      FROM (${reportSql(projectId, sprintId)}) r
     WHERE id = ${sprintId}::uuid`;
}

/** A tally of the tasks for which `when` holds: `{tasks, points, unestimated}`, points the sum of `estimate` (null counts 0). */
function tally(when: string, estimate: string): string {
  return `json_build_object('tasks', count(*) FILTER (WHERE ${when}),
           'points', COALESCE(sum(${estimate}) FILTER (WHERE ${when}), 0)::float8,
           'unestimated', count(*) FILTER (WHERE (${when}) AND ${estimate} IS NULL))`;
}

/** SQL for the tally of the scope committed at the activation of the sprint `sprint` (an SQL expression): `sprint.activated` carries it. */
export function committedSql(sprint: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(SELECT ${Prisma.raw(tally('true', 'c.committed_estimate'))} FROM sprint_scope c WHERE c.sprint_id = ${sprint} AND c.committed)`;
}

/**
 * A sprint's report as `GET .../report` answers it, computed now (decisions.md section 19): a
 * planned sprint's from its live tasks, an active or closed one's from `sprint_scope`.
 */
export function reportSql(projectId: string, sprintId: string): Statement<{ report: SprintReportDto }> {
  const fromScope = Prisma.sql`
    SELECT c.task_id, c.committed, c.committed_estimate, c.entered_estimate, c.left_estimate, c.reestimated,
           ${Prisma.raw(REPORT_COUNTS.in_end)} AS in_end, c.carried_over,
           ${Prisma.raw(REPORT_COUNTS.added)} AS added, ${Prisma.raw(REPORT_COUNTS.removed)} AS removed, t.rank,
           COALESCE(t.title, c.title) AS title,
           -- As at the close (or now) for a task still counted there; as it is now for one that left.
           CASE WHEN c.in_scope OR c.carried_over OR t.id IS NULL THEN c.status ELSE t.status END AS status,
           CASE WHEN c.in_scope OR c.carried_over OR t.id IS NULL THEN c.estimate ELSE t.estimate END AS estimate
      FROM sprint_scope c
      -- The task as it is now. Those in the sprint now (most), in one pass of its sprint_id index
      -- and hashed (OFFSET 0: not looked up one by one through the primary key); the others by
      -- their primary key, task by task (OFFSET 0 keeps the planner from hashing the whole table).
      LEFT JOIN (SELECT t.id, t.rank, t.title, t.status, t.estimate FROM tasks t WHERE t.sprint_id = ${sprintId}::uuid OFFSET 0) here
             ON here.id = c.task_id
      LEFT JOIN LATERAL (SELECT t.id, t.rank, t.title, t.status, t.estimate FROM tasks t WHERE here.id IS NULL AND t.id = c.task_id OFFSET 0) gone
             ON true
     CROSS JOIN LATERAL (SELECT COALESCE(here.id, gone.id) AS id, COALESCE(here.rank, gone.rank) AS rank, COALESCE(here.title, gone.title) AS title,
                                COALESCE(here.status, gone.status) AS status, CASE WHEN here.id IS NULL THEN gone.estimate ELSE here.estimate END AS estimate) t
     WHERE c.sprint_id = ${sprintId}::uuid`;
  const planned = Prisma.sql`
    SELECT t.id AS task_id, false AS committed, NULL::numeric AS committed_estimate, NULL::numeric AS entered_estimate,
           NULL::numeric AS left_estimate, 0::numeric AS reestimated, true AS in_end, false AS carried_over,
           false AS added, false AS removed, t.rank, t.title, t.status, t.estimate
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
        ${fromScope} AND s.status <> 'planned'
        UNION ALL
        ${planned} AND s.status = 'planned'
      ) c ON true
     WHERE s.id = ${sprintId}::uuid AND s.project_id = ${projectId}::uuid
     GROUP BY s.id`;
}

/**
 * A sprint's burndown in Madrid days (decisions.md sections 19 and 26), each day's tallies at its
 * end; a closed sprint's is frozen, since no later change adds ledger rows to it.
 */
export function burndownSql(projectId: string, sprintId: string): Statement<{ burndown: BurndownDto }> {
  const scope = tally('x.in_scope', 'x.estimate');
  const completed = tally("x.in_scope AND x.status = 'done'", 'x.estimate');
  const cancelled = tally("x.in_scope AND x.status = 'cancelled'", 'x.estimate');
  // Points as numeric, so that 21 - 10.5 - 0.1 is 10.4, not a float's 10.399999999999999.
  const remaining = (field: string, type: string) =>
    `((p.scope->>'${field}')::${type} - (p.completed->>'${field}')::${type} - (p.cancelled->>'${field}')::${type})`;
  const unlessAhead = (sql: string) => `CASE WHEN p.ahead THEN NULL ELSE ${sql} END`;
  return Prisma.sql`
    WITH sprint AS (
      SELECT s.id, s.activated_at, COALESCE(s.closed_at, now()) AS until,
             CASE WHEN s.status = 'closed' THEN s.closed_start_date ELSE s.start_date END AS start_date,
             CASE WHEN s.status = 'closed' THEN s.closed_end_date ELSE s.end_date END AS end_date,
             -- The days ahead, up to the endDate: an active sprint's only.
             CASE WHEN s.status = 'active' THEN s.end_date END AS ahead_until,
             (SELECT COALESCE(sum(c.committed_estimate), 0) FROM sprint_scope c WHERE c.sprint_id = s.id AND c.committed) AS committed
        FROM sprints s
       WHERE s.id = ${sprintId}::uuid AND s.project_id = ${projectId}::uuid AND s.activated_at IS NOT NULL
    ),
    days AS (
      SELECT d::date AS day, d::date > (s.until AT TIME ZONE 'Europe/Madrid')::date AS ahead,
             LEAST(((d + interval '1 day') AT TIME ZONE 'Europe/Madrid') - interval '1 millisecond', s.until) AS until
        FROM sprint s,
             -- Madrid midnights, as timestamps without a zone: day + 1 at Madrid is then the instant the day ends.
             generate_series((s.activated_at AT TIME ZONE 'Europe/Madrid')::date::timestamp,
                             GREATEST((s.until AT TIME ZONE 'Europe/Madrid')::date, s.ahead_until)::timestamp,
                             interval '1 day') d
    ),
    -- Each ledger row holds its task's state from its time until the task's next row (one pass
    -- in the index's order); a day counts the rows holding at its end.
    states AS (
      SELECT l.in_scope OR l.carried_over AS in_scope, l.estimate, l.status, l.at,
             lead(l.at) OVER (PARTITION BY l.task_id ORDER BY l.id) AS next_at
        FROM sprint_ledger l WHERE l.sprint_id = ${sprintId}::uuid
    ),
    per_day AS (
      SELECT d.day, d.ahead, ${Prisma.raw(scope)} AS scope, ${Prisma.raw(completed)} AS completed, ${Prisma.raw(cancelled)} AS cancelled
        FROM days d
        LEFT JOIN states x ON NOT d.ahead AND x.at <= d.until AND (x.next_at IS NULL OR x.next_at > d.until)
       GROUP BY d.day, d.ahead
    )
    SELECT json_build_object('days', COALESCE((
             SELECT json_agg(json_build_object(
                      'date', to_char(p.day, 'YYYY-MM-DD'),
                      'scope', ${Prisma.raw(unlessAhead('p.scope'))},
                      'completed', ${Prisma.raw(unlessAhead('p.completed'))},
                      'cancelled', ${Prisma.raw(unlessAhead('p.cancelled'))},
                      'remaining', ${Prisma.raw(
                        unlessAhead(`json_build_object(
                        'tasks', ${remaining('tasks', 'int')},
                        'points', ${remaining('points', 'numeric')}::float8,
                        'unestimated', ${remaining('unestimated', 'int')})`),
                      )},
                      -- From the committed points on startDate to 0 on endDate (0 on a one-day window's day).
                      'ideal', CASE WHEN s.start_date IS NULL OR s.end_date IS NULL OR p.day NOT BETWEEN s.start_date AND s.end_date THEN NULL
                                    WHEN s.end_date = s.start_date THEN 0
                                    ELSE round(s.committed * (s.end_date - p.day) / (s.end_date - s.start_date), 1)::float8 END)
                    ORDER BY p.day)
               FROM per_day p), '[]'::json)) AS burndown
      FROM sprint s`;
}

/**
 * The project's last `last` closed sprints, most recently closed first, each with what its frozen
 * report committed and completed, and the mean of their completed tasks and points (0 with none).
 */
export function velocitySql(projectId: string, last: number): Statement<{ velocity: VelocityDto }> {
  return Prisma.sql`
    WITH closed AS (
      SELECT s.id, s.name, s.closed_at, s.closed_tallies AS tallies FROM sprints s
       WHERE s.project_id = ${projectId}::uuid AND s.status = 'closed' AND s.closed_tallies IS NOT NULL
       ORDER BY s.closed_at DESC, s.id DESC LIMIT ${last}
    )
    SELECT json_build_object(
             'sprints', COALESCE(json_agg(json_build_object('id', c.id, 'name', c.name, 'closedAt', ${Prisma.raw(isoTimestamp('c.closed_at'))},
                                                            'committed', c.tallies->'committed', 'completed', c.tallies->'completed')
                                 ORDER BY c.closed_at DESC, c.id DESC), '[]'::json),
             'average', json_build_object('tasks', COALESCE(avg((c.tallies->'completed'->>'tasks')::float8), 0),
                                          'points', COALESCE(avg((c.tallies->'completed'->>'points')::float8), 0))
           ) AS velocity
      FROM closed c`;
}
