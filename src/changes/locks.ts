import { Prisma } from '../generated/prisma/client';

/**
 * The lock order of every write, so that no two writes wait for each other in a circle
 * (docs/locking.md says what each write takes, in which mode, and why):
 *  1. advisory locks on a part of the project read as a whole (dependencies, ranks, webhooks);
 *  2. sprint rows by id; 3. task rows, a parent before its subtasks, else by id (or one label or
 *     member row); 3b. comment rows after their task's, a top-level comment before its replies,
 *     then attachment rows after their task's (an upload also takes `attachments:<project>` in 1);
 *  4. the project's event row (ChangeLog.record), then at COMMIT its task list version row.
 * Each row in the strongest mode the write needs, before step 4; what a write compares is read
 * by a statement after the one that locks (a waiting statement sees only the locked row anew).
 */
export type RowLockMode = 'FOR KEY SHARE' | 'FOR SHARE' | 'FOR NO KEY UPDATE' | 'FOR UPDATE';

/** Locks the sprints `which` selects (on the row `s`), by id, answering `columns` of each. */
export function lockSprints(
  which: Prisma.Sql,
  mode: RowLockMode,
  columns: Prisma.Sql = Prisma.sql`s.id::text, s.project_id::text AS "projectId", s.status::text AS status`,
): Prisma.Sql {
  return Prisma.sql`SELECT ${columns} FROM sprints s WHERE ${which} ORDER BY s.id ${Prisma.raw(mode)}`;
}

/**
 * Locks the tasks `which` selects (on the row `t`), by id; a parent in a statement before its
 * subtasks'. `projectId` may be an expression: the app side knows a sprint, not its project.
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
 * Locks the comments of `taskId` that `which` selects (on the row `c`), by id. The task first
 * (FOR SHARE: it cannot go to the trash meanwhile), a top-level comment before its replies.
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
 * Locks the label `id` (the row `l`). NO KEY UPDATE even for a rename: UPDATE here would deadlock
 * with a task write holding the event row and needing KEY SHARE (docs/locking.md).
 */
export function lockLabel(id: string, columns: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`SELECT ${columns} FROM labels l WHERE l.id = ${id}::uuid FOR NO KEY UPDATE`;
}

/** Locks the member `id` (the row `m`): NO KEY UPDATE, which the KEY SHARE of task writes does not conflict with. */
export function lockMember(id: string, columns: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`SELECT ${columns} FROM memberships m WHERE m.id = ${id}::uuid FOR NO KEY UPDATE`;
}
