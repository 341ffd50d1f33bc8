import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import type { SqlTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { MetricsRegistry } from '../metrics/metrics-registry';
import { SPRINT_JSON } from '../sprints/sprint-view.sql';
import type { TaskDetailDto } from '../tasks/task.dto';
import { TASK_VIEW_CTES, TASK_VIEW_JOINS, taskJson } from '../tasks/task-view.sql';
import { Change, CHANGES_CHANNEL, WEBHOOK_DELIVERIES_QUEUED } from './change';

/**
 * The one place that records a change: its task history entries, its events (the change feed,
 * decisions.md section 13) and their webhook deliveries (the outbox, section 14), written by
 * one statement inside the change's own transaction, so that all of them commit with the
 * change or not at all. Services call `record` once per change, after its writes.
 *
 * Event numbers: a first statement takes the project's next `sequence` numbers by updating its
 * `event_sequences` row, whose lock it then holds until the transaction ends. A concurrent
 * change of the same project waits there and numbers its events only after this one has
 * committed (or rolled back, returning its numbers): sequences are gap-free and in commit
 * order, so a feed reader that has seen N has seen everything up to N. Record is the last work
 * of a change, and its two statements go out with the COMMIT in one round trip
 * (SqlTransaction.finish), which keeps that lock as short as the database's own work. (Under
 * an Idempotency-Key the COMMIT follows one round trip later, with the stored answer.)
 *
 * Then one statement writes the rest, numbering from the row the first one updated. It starts
 * after the numbers are taken, so it sees every change numbered before this one: the event's
 * `data` is built by PostgreSQL from the rows as they are right after this change, in commit
 * order (a blocker finished by the change before shows here), with the same JSON definitions
 * as the API's answers (task-view.sql.ts, sprint-view.sql.ts). At commit, NOTIFY wakes the
 * feed's long polls and the webhook workers.
 */
@Injectable()
export class ChangeLog {
  private readonly appended: Counter<'type'>;

  constructor(registry: MetricsRegistry) {
    this.appended = new Counter({
      name: 'events_appended_total',
      help: 'Events appended to the change feed, by type',
      labelNames: ['type'],
      registers: [registry],
    });
  }

  /**
   * Records `change`; answers each task it names as its event shows it (as GET answers it, or
   * as the trash lists it), so that the service can answer with it instead of reading it again.
   */
  async record(tx: SqlTransaction, change: Change): Promise<RecordedTasks> {
    if (change.records.length === 0) return {};
    const rows = change.records.map((record, index) => ({
      ord: index + 1,
      task_id: 'task' in record ? record.task : null,
      sprint_id: 'sprint' in record ? record.sprint : null,
      action: record.action,
      changes: historyChanges(record),
      blocked_by_id: 'blockedById' in record ? (record.blockedById ?? null) : null,
    }));
    const count = rows.length;
    // The tasks and sprints to show, as arrays rather than a subquery on `input`: the planner
    // takes json_to_recordset for 100 rows and would scan the whole project's tasks to match
    // them (measured on PGlite: 4x the planning time, 6x the execution time of one create).
    const taskIds = rows.flatMap((row) => (row.task_id ? [row.task_id] : []));
    const sprintIds = rows.flatMap((row) => (row.sprint_id ? [row.sprint_id] : []));
    const at = change.at.toISOString();
    const takeNumbers = Prisma.sql`
      INSERT INTO event_sequences AS s (project_id, last_sequence) VALUES (${change.projectId}::uuid, ${count})
      ON CONFLICT (project_id) DO UPDATE SET last_sequence = s.last_sequence + ${count}`;
    const writeTheRest = Prisma.sql`
      WITH numbered AS (
        -- The numbers the first statement took: this transaction's own update of the row.
        SELECT last_sequence - ${count} AS before FROM event_sequences WHERE project_id = ${change.projectId}::uuid
      ),
      input AS (
        SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
          AS r(ord int, task_id uuid, sprint_id uuid, action text, changes json, blocked_by_id uuid)
      ),
      history AS (
        INSERT INTO history_entries (project_id, task_id, actor, action, changes, created_at)
        SELECT ${change.projectId}::uuid, i.task_id, ${change.actor}, i.action, COALESCE(i.changes, '[]'::json), ${at}::timestamptz
          FROM input i WHERE i.task_id IS NOT NULL AND i.action <> 'purged'
      ),
      shown AS (
        SELECT t.* FROM tasks t WHERE t.id = ANY(${taskIds}::uuid[]) AND t.project_id = ${change.projectId}::uuid
      ),
      ${TASK_VIEW_CTES},
      task_views AS (
        SELECT t.id, CASE WHEN t.deleted_at IS NULL THEN ${taskJson({ detail: true })} ELSE ${taskJson({ trash: true })} END AS view
          FROM shown t ${TASK_VIEW_JOINS}
      ),
      sprint_views AS (
        SELECT s.id, ${SPRINT_JSON} AS view
          FROM sprints s WHERE s.id = ANY(${sprintIds}::uuid[]) AND s.project_id = ${change.projectId}::uuid
      ),
      events AS (
        INSERT INTO events (project_id, sequence, type, actor, occurred_at, data)
        SELECT ${change.projectId}::uuid, n.before + i.ord, kind || '.' || i.action, ${change.actor}, ${at}::timestamptz,
               CASE
                 WHEN i.action = 'updated' THEN json_build_object(kind, view, 'changes', i.changes)
                 WHEN i.blocked_by_id IS NOT NULL THEN json_build_object(kind, view, 'blockedById', i.blocked_by_id)
                 ELSE json_build_object(kind, view)
               END
          FROM input i
         CROSS JOIN numbered n
         CROSS JOIN LATERAL (SELECT CASE WHEN i.task_id IS NOT NULL THEN 'task' ELSE 'sprint' END AS kind) k
         -- A task or sprint destroyed by the change is shown as its id alone.
         CROSS JOIN LATERAL (
           SELECT COALESCE((SELECT v.view FROM task_views v WHERE v.id = i.task_id),
                           (SELECT v.view FROM sprint_views v WHERE v.id = i.sprint_id),
                           json_build_object('id', COALESCE(i.task_id, i.sprint_id))) AS view
         ) v
        RETURNING id, type
      ),
      deliveries AS (
        INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, next_attempt_at, created_at)
        SELECT ${change.projectId}::uuid, w.id, e.id, ${at}::timestamptz, ${at}::timestamptz
          FROM events e
          JOIN webhooks w ON w.project_id = ${change.projectId}::uuid AND w.enabled AND (e.type = ANY(w.events) OR '*' = ANY(w.events))
        RETURNING 1
      )
      -- Only a change that queued deliveries wakes the webhook workers.
      SELECT pg_notify(
               ${CHANGES_CHANNEL},
               ${change.projectId}::text || CASE WHEN EXISTS (SELECT FROM deliveries) THEN ${WEBHOOK_DELIVERIES_QUEUED}::text ELSE '' END
             )::text AS notified,
             (SELECT COALESCE(json_object_agg(v.id, v.view), '{}'::json) FROM task_views v) AS tasks`;
    const [, [row]] = await tx.finish<[unknown[], { tasks: RecordedTasks }[]]>(takeNumbers, writeTheRest);
    tx.afterCommit(() => {
      for (const record of change.records) this.appended.inc({ type: `${'task' in record ? 'task' : 'sprint'}.${record.action}` });
    });
    return row.tasks;
  }
}

/** Task id: the task as the change left it. */
export type RecordedTasks = Record<string, TaskDetailDto>;

/** A dependency's history entry names the other task as the changed field `blockedById`. */
function historyChanges(record: Change['records'][number]) {
  if (record.action === 'dependency_added') return [{ field: 'blockedById', from: null, to: record.blockedById }];
  if (record.action === 'dependency_removed') return [{ field: 'blockedById', from: record.blockedById, to: null }];
  return record.changes ?? [];
}
