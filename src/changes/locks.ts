import { Prisma } from '../generated/prisma/client';

/**
 * The lock order of every write (docs/locking.md says what each write takes, and why). A write
 * takes its locks in this order and never another, so that no two writes can wait for each
 * other in a circle:
 *
 *  1. Advisory locks on a part of the project that a write reads as a whole: its dependency
 *     graph (`dependencies:<project>`), its backlog order (`ranks:<project>`, taken by moves),
 *     its webhooks (`webhooks:<project>`). (An
 *     Idempotency-Key's lock is only ever tried without waiting: it cannot deadlock.)
 *  2. Sprint rows, by id (lockSprints).
 *  3. Task rows: a parent before its subtasks, otherwise by id (lockTasks). (The admin writes of
 *     a label or a member lock that one row here, lockLabel and lockMember: no other write locks
 *     those rows, and they lock no task.)
 *  3b. Comment rows, after their task's: a top-level comment before its replies, otherwise by
 *     id (lockComments). Attachment rows, after their task's (lockAttachments); an upload takes
 *     the advisory lock `attachments:<project>` in step 1 (the quota and the count per task).
 *  4. The project's event row: ChangeLog.record, the last step of every write, which also takes
 *     the change's time; then, at COMMIT, the project's task list version row (a deferred
 *     trigger).
 *
 * Each row is locked in the strongest mode the write will need, before step 4, so that no lock
 * is upgraded later and no statement after the event row waits for a row: FOR UPDATE for a row
 * it deletes, FOR NO KEY UPDATE for one it updates, FOR SHARE for one that must not change
 * under it (the sprint a task goes into, a parent, a blocker). Rows the database itself locks
 * for a foreign key (KEY SHARE) are rows already locked here, or rows no write locks more
 * strongly than NO KEY UPDATE (labels, members, keys, webhooks), which does not conflict.
 *
 * Read after the lock: a statement that waited for a row lock returns that row as the holder
 * committed it, but anything else it reads (a join, a subquery) as it was when it started. What
 * a write compares (a task's labels, a parent's state, a sprint's tasks) is read by a statement
 * after the one that locks, sent in the same pipeline (SqlTransaction.pipeline) so that it costs
 * no round trip.
 */
export type RowLockMode = 'FOR KEY SHARE' | 'FOR SHARE' | 'FOR NO KEY UPDATE' | 'FOR UPDATE';

/**
 * Locks the sprints that `which` selects (a condition on the sprint row `s`), by id, answering
 * `columns` of each (from `s`, current once locked): by default what writes compare,
 * `{id, projectId, status}`.
 */
export function lockSprints(
  which: Prisma.Sql,
  mode: RowLockMode,
  columns: Prisma.Sql = Prisma.sql`s.id::text, s.project_id::text AS "projectId", s.status::text AS status`,
): Prisma.Sql {
  return Prisma.sql`SELECT ${columns} FROM sprints s WHERE ${which} ORDER BY s.id ${Prisma.raw(mode)}`;
}

/**
 * Locks the tasks of the project that `which` selects (a condition on the task row `t`), by id,
 * answering `columns` of each (from `t`, current once locked). Lock a parent in a statement
 * before its subtasks'. `projectId`: the caller's project, or an expression that finds it
 * (the app side knows a sprint, not its project).
 */
export function lockTasks(
  projectId: string | Prisma.Sql,
  which: Prisma.Sql,
  mode: RowLockMode,
  columns: Prisma.Sql = Prisma.sql`t.id::text`,
): Prisma.Sql {
  return Prisma.sql`SELECT ${columns} FROM tasks t WHERE t.project_id = ${projectId}::uuid AND ${which} ORDER BY t.id ${Prisma.raw(mode)}`;
}

/**
 * Locks the comments of the task `taskId` that `which` selects (a condition on the comment row
 * `c`), by id, answering `columns` of each (from `c`, current once locked). Lock the task first
 * (a comment write holds it FOR SHARE, so that it cannot go to the trash or be purged meanwhile),
 * and a top-level comment in a statement before its replies'.
 */
export function lockComments(projectId: string, taskId: string, which: Prisma.Sql, mode: RowLockMode, columns: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT ${columns} FROM comments c
     WHERE c.task_id = ${taskId}::uuid AND c.project_id = ${projectId}::uuid AND ${which} ORDER BY c.id ${Prisma.raw(mode)}`;
}

/**
 * Locks the attachments of the task `taskId` that `which` selects (a condition on the attachment
 * row `a`), by id, answering `columns` of each. Lock the task first (FOR SHARE: it cannot go to
 * the trash or be purged meanwhile).
 */
export function lockAttachments(projectId: string, taskId: string, which: Prisma.Sql, mode: RowLockMode, columns: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT ${columns} FROM attachments a
     WHERE a.task_id = ${taskId}::uuid AND a.project_id = ${projectId}::uuid AND ${which} ORDER BY a.id ${Prisma.raw(mode)}`;
}

/**
 * Locks the label `id` (the row `l`) for its update, answering `columns` of it (current once
 * locked). Always NO KEY UPDATE, though a rename's UPDATE (of a column in a unique index) takes
 * UPDATE after the event row: that upgrade conflicts only with KEY SHARE, which task writes take
 * on the label under the same event row, so it never waits; taking UPDATE here would deadlock
 * with a task write that holds the event row and needs KEY SHARE (docs/locking.md).
 */
export function lockLabel(id: string, columns: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`SELECT ${columns} FROM labels l WHERE l.id = ${id}::uuid FOR NO KEY UPDATE`;
}

/**
 * Locks the member `id` (the membership row `m`) for its update, answering `columns` of it.
 * NO KEY UPDATE: no write locks a member more strongly than KEY SHARE (a task assigned to it),
 * which it does not conflict with.
 */
export function lockMember(id: string, columns: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`SELECT ${columns} FROM memberships m WHERE m.id = ${id}::uuid FOR NO KEY UPDATE`;
}
