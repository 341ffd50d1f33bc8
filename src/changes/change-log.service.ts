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
 * The one place that records a change: its task history entries, its events (the change feed,
 * decisions.md sections 13, 20 and 23: tasks, sprints, labels, members and comments), their webhook deliveries (the outbox, section 14) and the sprint
 * ledger (section 19), inside the change's own transaction, so that all of them commit with the change or not at all. Every
 * write ends with one call to `record`, which also sends the write's own statements and the
 * COMMIT (docs/locking.md: this is the last step of the lock order).
 *
 * `record` sends, in one round trip (SqlTransaction.finish):
 * 1. The claim: the project's next `sequence` numbers, by updating its `event_sequences` row,
 *    whose lock it then holds until the transaction ends, and the change's time, taken under
 *    that lock (`last_change_at`, later than the previous change's). A concurrent change
 *    of the same project waits there and takes its numbers and time only after this one has
 *    committed (or rolled back, returning its numbers): sequences are gap-free and in commit
 *    order, and so are the times, which the write's statements read as CHANGE_TIME.
 * 2. The write's own statements (inserts, updates, deletes), which see the time.
 * 3. At a sprint's activation or close, the sprint ledger's statements: the scope committed, the
 *    rows of the tasks the close moves out, the frozen report (src/sprints/sprint-ledger.sql.ts).
 * 4. One statement that writes the rest, numbering from the row the claim updated (and, but at
 *    a close, first the ledger's rows for what the change did to the active sprint's scope). It starts
 *    after the writes, so its `data` is built by PostgreSQL from the rows as they are right
 *    after this change, in commit order (a blocker finished by the change before shows here),
 *    with the same JSON definitions as the API's answers (task-view.sql.ts, sprint-view.sql.ts),
 *    read only for the kinds of resource the change records (viewCtes).
 * 5. The COMMIT (under an Idempotency-Key, one round trip later, with the stored answer).
 * The project's event row is therefore held only while the database does this change's own
 * work, never while Node waits. At commit, NOTIFY wakes the feed's long polls and the webhook
 * workers.
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
   * Writes `change` with the statements `writes` (their timestamps read CHANGE_TIME) and ends
   * the transaction. Answers each task, sprint, label and member the change names as its event
   * shows it (a task as GET answers it, or as the trash lists it), so that the service can answer with it
   * instead of reading it again, and the rows each of `writes` returned, in order.
   *
   * Every row the writes change must already be locked (docs/locking.md): after the claim, no
   * statement of the change may wait for a row lock.
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
    // The resources to show, by kind, as arrays rather than a subquery on `input`: the planner
    // takes json_to_recordset for 100 rows and would scan the whole project's tasks to match
    // them (measured on PGlite: 4x the planning time, 6x the execution time of one create).
    const ids = Object.fromEntries(RECORD_KINDS.map((kind) => [kind, rows.flatMap((row) => (row.kind === kind ? [row.id] : []))])) as ShownIds;
    // The clock is the database's, read once the row is locked (the SET list is computed after
    // the lock), in the milliseconds the API shows, and a millisecond after the project's last
    // change at least: each change of a project has a time of its own, in commit order, so that
    // a task's history, ordered by time, is in the order its changes were made.
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

/**
 * How each kind of resource is shown (its id and JSON, `kind`, `id`, `view`), read from the rows
 * as the change left them; a task as GET answers it, or as the trash lists it (after the CTE
 * `shown` and TASK_VIEW_CTES, viewCtes); a deleted comment as its record says (commentViews).
 */
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

/**
 * A comment created or updated as GET answers it; a deleted one as `{id, taskId, parentId}`,
 * from its record (decisions.md section 23: its row is gone, or a tombstone whose own view is
 * not what the event shows).
 */
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

/**
 * The CTEs of `record`'s last statement that read what the change shows, ending with `views`
 * (kind, id, view): only for the kinds it records, so that a task's change does not carry (nor
 * the database plan) the label and member views, and a label's or member's change not the
 * task view's CTEs.
 */
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

/**
 * SQL for the sequence number that `record` gives the `ord`th record (from 1) of `change`, for
 * the write statements sent with it (after the claim): a task's rank derives from its created
 * event's number (src/tasks/task-ranks.ts).
 */
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

/**
 * The row of `record`'s last statement: `views` by kind and id, each built by the view of its
 * kind (taskJson, SPRINT_JSON, LABEL_JSON, MEMBER_JSON), which the DTOs describe; and the NOTIFY.
 */
type RecordedViews = Omit<Recorded, 'written'> & { notified: string };

/** A dependency's history entry names the other task as the changed field `blockedById`. */
function historyChanges(record: ChangeRecord) {
  if (record.action === 'dependency_added') return [{ field: 'blockedById', from: null, to: record.blockedById }];
  if (record.action === 'dependency_removed') return [{ field: 'blockedById', from: record.blockedById, to: null }];
  return 'changes' in record ? (record.changes ?? []) : [];
}
