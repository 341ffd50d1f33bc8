import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { cte, rowsOf, statement, withCtes, type Cte, type SqlTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { MetricsRegistry } from '../metrics/metrics-registry';
import type { LabelDto, MemberDto } from '../projects/project-resources.dto';
import { LABEL_JSON, MEMBER_JSON } from '../projects/project-resources.sql';
import { committedSql, sprintLedgerParts } from '../sprints/sprint-ledger.sql';
import { SPRINT_JSON } from '../sprints/sprint-view.sql';
import type { SprintDto } from '../sprints/sprint.dto';
import type { TaskDetailDto } from '../tasks/task.dto';
import { TASK_VIEW_CTES, TASK_VIEW_JOINS, taskJson } from '../tasks/task-view.sql';
import { COMMENT_JSON } from '../comments/comment-view.sql';
import type { CommentDto } from '../comments/comment.dto';
import { ATTACHMENT_JSON } from '../attachments/attachment-view.sql';
import type { AttachmentEventDto } from '../attachments/attachment.dto';
import {
  Change,
  CHANGE_TIME,
  CHANGE_TIME_SETTING,
  AttachmentChange,
  CommentChange,
  ChangeRecord,
  CHANGES_CHANNEL,
  RecordKind,
  subjectOf,
  WEBHOOK_DELIVERIES_QUEUED,
} from './change';

/**
 * The one place that records a change: history, events, webhook deliveries and the sprint ledger,
 * in the change's own transaction so that they commit with it or not at all (docs/locking.md: the
 * last step of the lock order; docs/statements.md: the statement it sends).
 * The claim of the project's `event_sequences` row comes first and is held only while the
 * database works: sequences and change times are gap-free and in commit order.
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
   * Writes `change` with `writes` and commits; answers each resource as its event shows it, so
   * that the caller need not read it again. Every row `writes` change must already be locked: after
   * the claim, no statement may wait for a row lock (docs/locking.md).
   */
  async record<W extends unknown[][] = unknown[][]>(tx: SqlTransaction, change: Change, ...writes: Prisma.Sql[]): Promise<Recorded<W>> {
    if (change.records.length === 0) throw new Error('A change records at least one task, sprint, label, member or comment change');
    const rows = change.records.map((record, index) => {
      const { kind, id } = subjectOf(record);
      return {
        ord: index + 1,
        kind,
        id,
        action: record.action,
        changes: historyChanges(record),
        blocked_by_id: 'blockedById' in record ? (record.blockedById ?? null) : null,
      };
    });
    const count = rows.length;
    // Arrays rather than a subquery on `input`: the planner guesses 100 rows for json_to_recordset
    // and would scan the project's tasks (docs/performance.md, Measured choices).
    const ids = Object.fromEntries(RECORD_KINDS.map((kind) => [kind, rows.flatMap((row) => (row.kind === kind ? [row.id] : []))])) as ShownIds;
    // The database's clock, read under the row lock and at least a millisecond after the last
    // change: a task's history ordered by time is the order its changes were made in.
    const claim = statement<{ at: string }>(Prisma.sql`
      WITH claimed AS (
        INSERT INTO event_sequences AS s (project_id, last_sequence, last_change_at)
        VALUES (${change.projectId}::uuid, ${count}, date_trunc('milliseconds', clock_timestamp()))
        ON CONFLICT (project_id) DO UPDATE
          SET last_sequence = s.last_sequence + ${count},
              last_change_at = greatest(s.last_change_at + interval '1 millisecond', date_trunc('milliseconds', clock_timestamp()))
        RETURNING last_change_at
      )
      SELECT set_config(${CHANGE_TIME_SETTING}, last_change_at::text, true) AS at FROM claimed`);
    const ledger = sprintLedgerParts(change);
    const writeTheRest = statement<RecordedViews>(withCtes([
      ...ledger.ctes,
      cte('numbered')`
        -- The numbers the claim took: this transaction's own update of the row.
        SELECT last_sequence - ${count} AS before FROM event_sequences WHERE project_id = ${change.projectId}::uuid`,
      cte('input')`
        SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
          AS r(ord int, kind text, id uuid, action text, changes json, blocked_by_id uuid)`,
      ...(ids.task.length > 0 ? [historyCte(change)] : []),
      ...viewCtes(change.projectId, ids, change),
      cte('events')`
        INSERT INTO events (project_id, sequence, type, actor, occurred_at, data)
        SELECT ${change.projectId}::uuid, n.before + i.ord, i.kind || '.' || i.action, ${change.actor}, ${CHANGE_TIME},
               CASE
                 WHEN i.action = 'updated' THEN json_build_object(i.kind, view, 'changes', i.changes)
                 WHEN i.blocked_by_id IS NOT NULL THEN json_build_object(i.kind, view, 'blockedById', i.blocked_by_id)
                 -- decisions.md section 19: what the sprint committed to, and at its close the frozen report.
                 WHEN i.kind = 'sprint' AND i.action = 'activated' THEN json_build_object(i.kind, view, 'report', json_build_object('committed', ${committedSql(Prisma.sql`i.id`)}))
                 WHEN i.kind = 'sprint' AND i.action = 'closed' THEN json_build_object(i.kind, view, 'report', (SELECT s.report FROM sprints s WHERE s.id = i.id))
                 ELSE json_build_object(i.kind, view)
               END
          FROM input i
         CROSS JOIN numbered n
         -- A task or sprint destroyed by the change is shown as its id alone.
         CROSS JOIN LATERAL (
           SELECT COALESCE((SELECT v.view FROM views v WHERE v.kind = i.kind AND v.id = i.id), json_build_object('id', i.id)) AS view
         ) v
        RETURNING id, type`,
      cte('deliveries')`
        INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, next_attempt_at, created_at)
        SELECT ${change.projectId}::uuid, w.id, e.id, ${CHANGE_TIME}, ${CHANGE_TIME}
          FROM events e
          JOIN webhooks w ON w.project_id = ${change.projectId}::uuid AND w.enabled AND (e.type = ANY(w.events) OR '*' = ANY(w.events))
        RETURNING 1`,
    ])`
      -- Only a change that queued deliveries wakes the webhook workers.
      SELECT pg_notify(
               ${CHANGES_CHANNEL},
               ${change.projectId}::text || CASE WHEN EXISTS (SELECT FROM deliveries) THEN ${WEBHOOK_DELIVERIES_QUEUED}::text ELSE '' END
             )::text AS notified,
             answer.*
        FROM (SELECT ${answerColumns(ids)} FROM views v) answer`);
    const answers = await tx.finish(claim, ...writes, ...ledger.before, writeTheRest);
    const [recorded] = rowsOf(writeTheRest, answers[answers.length - 1]);
    tx.afterCommit(() => {
      for (const row of rows) this.appended.inc({ type: `${row.kind}.${row.action}` });
    });
    return { ...recorded, written: answers.slice(1, 1 + writes.length) as W };
  }
}

/** The ids of each kind of resource a change records, which its events and its answer show. */
type ShownIds = Record<RecordKind, string[]>;

/** How each kind of resource is shown (`kind`, `id`, `view`), read from the rows as the change left them. */
const VIEW_OF: Record<RecordKind, (projectId: string, ids: string[], change: Change) => Prisma.Sql> = {
  task: () => Prisma.sql`
    SELECT 'task' AS kind, t.id, CASE WHEN t.deleted_at IS NULL THEN ${taskJson({ detail: true })} ELSE ${taskJson({ trash: true })} END AS view
      FROM shown t ${TASK_VIEW_JOINS}`,
  sprint: (projectId, ids) => Prisma.sql`
    SELECT 'sprint' AS kind, s.id, ${SPRINT_JSON} AS view FROM sprints s WHERE s.id = ANY(${ids}::uuid[]) AND s.project_id = ${projectId}::uuid`,
  label: (projectId, ids) => Prisma.sql`
    SELECT 'label' AS kind, l.id, ${LABEL_JSON} AS view FROM labels l WHERE l.id = ANY(${ids}::uuid[]) AND l.project_id = ${projectId}::uuid`,
  member: (projectId, ids) => Prisma.sql`
    SELECT 'member' AS kind, m.id, ${MEMBER_JSON} AS view FROM memberships m WHERE m.id = ANY(${ids}::uuid[]) AND m.project_id = ${projectId}::uuid`,
  comment: (projectId, _ids, change) => commentViews(projectId, change),
  attachment: (projectId, _ids, change) => attachmentViews(projectId, change),
};

/** An attachment created as events show it (ATTACHMENT_JSON); a deleted one as `{id, taskId}`, from its record (its row is gone). */
function attachmentViews(projectId: string, change: Change): Prisma.Sql {
  const records = change.records.filter((record): record is AttachmentChange => 'attachment' in record);
  const shown = records.filter((record) => !record.deleted).map((record) => record.attachment);
  const deleted = records.flatMap((record) => (record.deleted ? [{ id: record.attachment, task_id: record.deleted.taskId }] : []));
  return Prisma.join(
    [
      ...(shown.length > 0
        ? [
            Prisma.sql`
    SELECT 'attachment' AS kind, a.id, ${ATTACHMENT_JSON} AS view FROM attachments a WHERE a.id = ANY(${shown}::uuid[]) AND a.project_id = ${projectId}::uuid`,
          ]
        : []),
      ...(deleted.length > 0
        ? [
            Prisma.sql`
    SELECT 'attachment' AS kind, d.id, json_build_object('id', d.id, 'taskId', d.task_id) AS view
      FROM json_to_recordset(${JSON.stringify(deleted)}::json) AS d(id uuid, task_id uuid)`,
          ]
        : []),
    ],
    '\n      UNION ALL',
  );
}

/** A deleted comment is shown from its record: its row is gone or a tombstone (decisions.md section 23). */
function commentViews(projectId: string, change: Change): Prisma.Sql {
  const records = change.records.filter((record): record is CommentChange => 'comment' in record);
  const shown = records.filter((record) => !record.deleted).map((record) => record.comment);
  const deleted = records.flatMap((record) =>
    record.deleted ? [{ id: record.comment, task_id: record.deleted.taskId, parent_id: record.deleted.parentId }] : [],
  );
  return Prisma.join(
    [
      ...(shown.length > 0
        ? [
            Prisma.sql`
    SELECT 'comment' AS kind, c.id, ${COMMENT_JSON} AS view FROM comments c WHERE c.id = ANY(${shown}::uuid[]) AND c.project_id = ${projectId}::uuid`,
          ]
        : []),
      ...(deleted.length > 0
        ? [
            Prisma.sql`
    SELECT 'comment' AS kind, d.id, json_build_object('id', d.id, 'taskId', d.task_id, 'parentId', d.parent_id) AS view
      FROM json_to_recordset(${JSON.stringify(deleted)}::json) AS d(id uuid, task_id uuid, parent_id uuid)`,
          ]
        : []),
    ],
    '\n      UNION ALL',
  );
}
const RECORD_KINDS = Object.keys(VIEW_OF) as RecordKind[];

/** The history entries of a change's tasks (none for a purge, which removes them), as a CTE of `record`'s last statement. */
function historyCte(change: Change): Cte {
  return cte('history')`
    INSERT INTO history_entries (project_id, task_id, actor, action, changes, created_at)
    SELECT ${change.projectId}::uuid, i.id, ${change.actor}, i.action, COALESCE(i.changes, '[]'::json), ${CHANGE_TIME}
      FROM input i WHERE i.kind = 'task' AND i.action <> 'purged'`;
}

/** The CTEs ending with `views`, only for the kinds the change records: the database plans no view it does not need. */
function viewCtes(projectId: string, ids: ShownIds, change: Change): Cte[] {
  const kinds = RECORD_KINDS.filter((kind) => ids[kind].length > 0);
  const views = cte('views')`${Prisma.join(
    kinds.map((kind) => VIEW_OF[kind](projectId, ids[kind], change)),
    '\n      UNION ALL',
  )}`;
  if (!kinds.includes('task')) return [views];
  return [
    cte('shown')`SELECT t.* FROM tasks t WHERE t.id = ANY(${ids.task}::uuid[]) AND t.project_id = ${projectId}::uuid`,
    ...TASK_VIEW_CTES,
    views,
  ];
}

/** `record`'s answer: each kind's views by id, from `views` (`{}` for a kind the change does not record). */
function answerColumns(ids: ShownIds): Prisma.Sql {
  return Prisma.join(
    RECORD_KINDS.map((kind) => {
      const [literal, column] = [Prisma.raw(`'${kind}'`), Prisma.raw(`${kind}s`)];
      return ids[kind].length > 0
        ? Prisma.sql`COALESCE(json_object_agg(v.id, v.view) FILTER (WHERE v.kind = ${literal}), '{}'::json) AS ${column}`
        : Prisma.sql`'{}'::json AS ${column}`;
    }),
    ', ',
  );
}

/** The sequence number `record` gives the `ord`th record (from 1), for writes sent after the claim (task-ranks.ts). */
export function recordSequence(change: Change, ord: number): Prisma.Sql {
  return Prisma.sql`((SELECT last_sequence FROM event_sequences WHERE project_id = ${change.projectId}::uuid) - ${change.records.length} + ${ord})`;
}

/** What `record` answers. */
export interface Recorded<W extends unknown[][] = unknown[][]> {
  /** Task id: the task as the change left it (absent for a task it destroyed). */
  tasks: RecordedTasks;
  /** Sprint id: the sprint as the change left it (absent for a sprint it deleted). */
  sprints: Record<string, SprintDto>;
  /** Label id: the label as the change left it. */
  labels: Record<string, LabelDto>;
  /** Membership id: the member as the change left it. */
  members: Record<string, MemberDto>;
  /** Comment id: the comment as the change left it (as `{id, taskId, parentId}` for one it deleted). */
  comments: Record<string, CommentDto>;
  /** Attachment id: the attachment as its event shows it (as `{id, taskId}` for one it deleted). */
  attachments: Record<string, AttachmentEventDto>;
  /** The rows each write statement returned, in the order given. */
  written: W;
}

/** Task id: the task as the change left it. */
export type RecordedTasks = Record<string, TaskDetailDto>;

/** The row of `record`'s last statement: the views by kind and id, and the NOTIFY. */
type RecordedViews = Omit<Recorded, 'written'> & { notified: string };

/** A dependency's history entry names the other task as the changed field `blockedById`. */
function historyChanges(record: ChangeRecord) {
  if (record.action === 'dependency_added') return [{ field: 'blockedById', from: null, to: record.blockedById }];
  if (record.action === 'dependency_removed') return [{ field: 'blockedById', from: record.blockedById, to: null }];
  return 'changes' in record ? (record.changes ?? []) : [];
}
