import { isDeepStrictEqual } from 'node:util';
import { Prisma } from '../generated/prisma/client';

/**
 * What happened to one task in a change. Each becomes the task's history entry (but
 * `purged`: the history goes with the task) and its event `task.<action>`.
 */
export interface TaskChange {
  task: string;
  action: 'created' | 'updated' | 'deleted' | 'restored' | 'dependency_added' | 'dependency_removed' | 'purged';
  /** Each field's before and after, in the API's names: `updated`, and `restored` when a field changed on the way back. */
  changes?: FieldChange[];
  /** The other task of `dependency_added` and `dependency_removed`. */
  blockedById?: string;
}

/** What happened to one sprint in a change: its event `sprint.<action>`. */
export interface SprintChange {
  sprint: string;
  action: 'created' | 'updated' | 'deleted' | 'activated' | 'closed';
  changes?: FieldChange[];
}

/**
 * What happened to one label or one member (the app side, decisions.md section 20): its event
 * `label.<action>` or `member.<action>`. Tasks show labels and members by id, joined when read,
 * so a rename is this one record, not an update of every task that shows it.
 */
export interface LabelChange {
  label: string;
  action: 'created' | 'updated';
  changes?: FieldChange[];
}

export interface MemberChange {
  member: string;
  action: 'created' | 'updated';
  changes?: FieldChange[];
}

/**
 * What happened to one comment (decisions.md section 23): its event `comment.<action>`. A comment
 * writes no task history and leaves its task's updatedAt alone. `deleted` carries what the event
 * shows of it, `{id, taskId, parentId}`: its row is gone, or a tombstone by then.
 */
export interface CommentChange {
  comment: string;
  action: 'created' | 'updated' | 'deleted';
  /** `updated`: the body's before and after. */
  changes?: FieldChange[];
  /** `deleted`: its task and parent. */
  deleted?: { taskId: string; parentId: string | null };
}

/**
 * What happened to one attachment (decisions.md section 24): its event `attachment.<action>`. Like a
 * comment, it writes no task history. `deleted` carries what the event shows of it, `{id, taskId}`.
 */
export interface AttachmentChange {
  attachment: string;
  action: 'created' | 'deleted';
  /** `deleted`: its task. */
  deleted?: { taskId: string };
}

export type ChangeRecord = TaskChange | SprintChange | LabelChange | MemberChange | CommentChange | AttachmentChange;

/** One change to a project, as ChangeLog.record writes it: its records in the order they happened. */
export interface Change {
  projectId: string;
  /** "<key name> (API)", or "App" for the product's app */
  actor: string;
  records: ChangeRecord[];
}

/** The kinds of resource a change record names: the first word of its event type. */
export type RecordKind = 'task' | 'sprint' | 'label' | 'member' | 'comment' | 'attachment';

/** What a record is about: its kind and the id of its task, sprint, label, member or comment. */
export function subjectOf(record: ChangeRecord): { kind: RecordKind; id: string } {
  if ('task' in record) return { kind: 'task', id: record.task };
  if ('sprint' in record) return { kind: 'sprint', id: record.sprint };
  if ('label' in record) return { kind: 'label', id: record.label };
  if ('comment' in record) return { kind: 'comment', id: record.comment };
  if ('attachment' in record) return { kind: 'attachment', id: record.attachment };
  return { kind: 'member', id: record.member };
}

/** Every event type of the feed (decisions.md sections 13, 20, 23 and 24), for `types` filters and webhook subscriptions. */
export const EVENT_TYPES = [
  'task.created',
  'task.updated',
  'task.deleted',
  'task.restored',
  'task.purged',
  'task.dependency_added',
  'task.dependency_removed',
  'sprint.created',
  'sprint.updated',
  'sprint.deleted',
  'sprint.activated',
  'sprint.closed',
  'label.created',
  'label.updated',
  'member.created',
  'member.updated',
  'comment.created',
  'comment.updated',
  'comment.deleted',
  'attachment.created',
  'attachment.deleted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The channel on which a committed change announces its project (LISTEN/NOTIFY). The payload is
 * the project id, followed by WEBHOOK_DELIVERIES_QUEUED when the change queued webhook deliveries
 * (a redeliver, which changes no project, sends WEBHOOK_DELIVERIES_QUEUED alone).
 */
export const CHANGES_CHANNEL = 'project_changes';
export const WEBHOOK_DELIVERIES_QUEUED = ':webhooks';

/**
 * The time of the change being written, in its statements (ChangeLog.record): the database's
 * clock read under the project's event-number lock, so that times follow commit order. Every
 * timestamp a change writes (updatedAt, completedAt, deletedAt, createdAt, history, events) is
 * this one, and only statements sent to ChangeLog.record, after its claim, can read it.
 */
export const CHANGE_TIME_SETTING = 'planning.change_at';
export const CHANGE_TIME = Prisma.raw(`current_setting('${CHANGE_TIME_SETTING}')::timestamptz`);

/** One field's change, in the API's names and values. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

/** The fields whose value differs between `before` and `after`, for `after`'s fields. */
export function changesBetween<T extends object>(before: Record<keyof T, unknown>, after: Partial<T>): FieldChange[] {
  const from = before as Record<string, unknown>;
  return Object.entries(after)
    .filter(([field, to]) => !isDeepStrictEqual(from[field], to))
    .map(([field, to]) => ({ field, from: from[field], to }));
}

/** Who made a change: a key, or the product's app (sprint activation and closing, labels and members). */
export const APP_ACTOR = 'App';
