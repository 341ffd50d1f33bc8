import { HttpStatus, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller';
import { insufficientPermission } from '../auth/permissions';
import { ChangeLog } from '../changes/change-log.service';
import { Change, CHANGE_TIME } from '../changes/change';
import { lockComments, lockTasks } from '../changes/locks';
import { isoTimestamp } from '../common/dates';
import { notFound, Problem } from '../common/errors/problem';
import { liveTaskNotFound } from '../tasks/live-task-not-found';
import { referenceNotFound } from '../tasks/task-references';
import { withDefaults } from '../common/fields/fields';
import { assertIfMatch } from '../common/http/entity-tag';
import type { JsonText } from '../common/http/json-text';
import { isUuid } from '../common/ids';
import { CursorCodec } from '../common/pagination/cursor';
import { PrismaService } from '../database/prisma.service';
import { cte, statement, withCtes } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { COMMENT_FIELDS, COMMENT_SQL, COMMENT_WRITABLE } from './comment-fields';
import { COMMENT_JSON, REVISION_JSON } from './comment-view.sql';
import type {
  CommentDto,
  CommentListDto,
  CommentResponseDto,
  CommentRevisionDto,
  CommentRevisionListDto,
  CreateCommentDto,
  ListCommentsQueryDto,
  UpdateCommentDto,
} from './comment.dto';
import { assertMembers, membersAmong, mentionedIds } from './mentions';

/**
 * A task's comments (decisions.md section 23). Reads are one statement each, which finds the
 * task live in the caller's project first: a task in the trash or absent has no comment routes
 * (404). Writes lock in the order of src/changes/locks.ts: the task FOR SHARE (it cannot go to
 * the trash, nor be purged, while a comment of it changes), then the comments a write needs, a
 * top-level one before its reply, then ChangeLog.record, which records the comment event and no
 * task history (a comment leaves its task's updatedAt alone).
 *
 * Order of checks of a PATCH or DELETE (docs/decisions.md, Comments): 401; 403 when the key holds
 * neither comments:write nor content:moderate (ApiKeyGuard); 400 for the body, its mentions
 * included; 404 for the task or the comment; 403 naming content:moderate when the comment was
 * written with another key and this one is no moderator; 412 for If-Match; then the change.
 */
@Injectable()
export class CommentsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cursors: CursorCodec,
    private readonly changes: ChangeLog,
  ) {}

  /** The task's comments, oldest first (createdAt, then id), tombstones and replies included, by keyset. */
  async list(caller: Caller, taskId: string, query: ListCommentsQueryDto): Promise<JsonText<CommentListDto>> {
    const limit = query.limit ?? 50;
    // A cursor of one task's comments is refused by another task's list.
    const list = { query, path: { taskId } };
    const after = this.cursors.positionAfter('comments', list);
    // The order's index (task_id, created_at, id) serves the keyset and the count.
    const keyset = after ? Prisma.sql`AND (c.created_at, c.id) > (${after.at}, ${after.id}::uuid)` : Prisma.empty;
    const [row] = await this.prisma.sql.rows(
      statement<{ found: boolean; total: number; comments: string; next: string | null }>(withCtes([
        liveTaskCte(caller.projectId, taskId),
        cte('page', { materialized: true })`
          SELECT c.*, row_number() OVER (ORDER BY c.created_at, c.id) AS position
            FROM (SELECT c.* FROM comments c WHERE c.task_id = (SELECT id FROM task) ${keyset} ORDER BY c.created_at, c.id LIMIT ${limit + 1}) c`,
      ])`
        SELECT EXISTS (SELECT FROM task) AS found,
               (SELECT count(*)::int FROM comments c WHERE c.task_id = (SELECT id FROM task)) AS total,
               (SELECT COALESCE(json_agg(${COMMENT_JSON} ORDER BY c.position), '[]'::json)::text FROM page c WHERE c.position <= ${limit}) AS comments,
               (SELECT json_build_array(${Prisma.raw(isoTimestamp('c.created_at'))}, c.id)::text
                  FROM page c WHERE c.position = ${limit} AND EXISTS (SELECT FROM page WHERE page.position > ${limit})) AS next`),
    );
    if (!row.found) throw await liveTaskNotFound(this.prisma.sql, caller.projectId, taskId);
    const next = row.next === null ? null : (JSON.parse(row.next) as [string, string]);
    const nextCursor = next === null ? null : this.cursors.encode('comments', list, { at: new Date(next[0]), id: next[1] });
    return `{"comments":${row.comments},"nextCursor":${JSON.stringify(nextCursor)},"total":${row.total}}`;
  }

  /** One comment of a live task, a tombstone as it shows. */
  async get(caller: Caller, taskId: string, commentId: string): Promise<CommentResponseDto> {
    const [row] = await this.prisma.sql.rows(
      statement<{ found: boolean; comment: CommentDto | null }>(withCtes([liveTaskCte(caller.projectId, taskId)])`
        SELECT EXISTS (SELECT FROM task) AS found,
               (SELECT ${COMMENT_JSON} FROM comments c WHERE c.id = ${commentId}::uuid AND c.task_id = (SELECT id FROM task)) AS comment`),
    );
    if (!row.found) throw await liveTaskNotFound(this.prisma.sql, caller.projectId, taskId);
    if (!row.comment) throw notFound('Comment');
    return { comment: row.comment };
  }

  /** Every text the comment had, newest first; none on a tombstone (its texts were destroyed). */
  async revisions(caller: Caller, taskId: string, commentId: string): Promise<CommentRevisionListDto> {
    const [row] = await this.prisma.sql.rows(
      statement<{ found: boolean; comment: boolean; revisions: CommentRevisionDto[] }>(withCtes([liveTaskCte(caller.projectId, taskId)])`
        SELECT EXISTS (SELECT FROM task) AS found,
               EXISTS (SELECT FROM comments c WHERE c.id = ${commentId}::uuid AND c.task_id = (SELECT id FROM task)) AS comment,
               (SELECT COALESCE(json_agg(${REVISION_JSON} ORDER BY r.number DESC), '[]'::json)
                  FROM comment_revisions r
                 WHERE r.comment_id = (SELECT c.id FROM comments c WHERE c.id = ${commentId}::uuid AND c.task_id = (SELECT id FROM task))) AS revisions`),
    );
    if (!row.found) throw await liveTaskNotFound(this.prisma.sql, caller.projectId, taskId);
    if (!row.comment) throw notFound('Comment');
    return { revisions: row.revisions };
  }

  /**
   * A new comment, or a reply to a top-level comment of the same task, with its first revision
   * and its mentions. The task is locked FOR SHARE (a trash or purge waits, or is waited for:
   * the comment is refused, or goes with the task), the parent FOR KEY SHARE (its deletion
   * waits, then finds this reply and leaves a tombstone; an edit of it does not wait).
   */
  async create(caller: Caller, taskId: string, dto: CreateCommentDto): Promise<CommentResponseDto> {
    const { projectId } = caller;
    const fields = withDefaults(COMMENT_FIELDS, dto);
    const mentions = mentionedIds(dto.body);
    const parentId = fields.parentId;
    const commentId = randomUUID();
    const comment = await this.prisma.write(async (tx) => {
      // A parentId that is not a UUID names nothing: no statement for it, 404 below.
      const lockParent = parentId !== null && isUuid(parentId);
      const answers = await tx.pipeline<unknown[][]>(
        lockLiveTask(projectId, taskId),
        ...(lockParent
          ? [
              lockComments(
                projectId,
                taskId,
                Prisma.sql`c.id = ${parentId}::uuid AND c.deleted_at IS NULL`,
                'FOR KEY SHARE',
                Prisma.sql`c.id::text, c.parent_id::text AS "parentId"`,
              ),
            ]
          : []),
        ...(mentions.length > 0 ? [membersAmong(projectId, mentions)] : []),
      );
      const [[task], parents, members] = [answers[0], lockParent ? answers[1] : [], mentions.length > 0 ? answers.at(-1)! : []] as [
        unknown[],
        { id: string; parentId: string | null }[],
        { id: string }[],
      ];
      assertMembers(mentions, members);
      if (!task) throw await liveTaskNotFound(tx, projectId, taskId);
      const [parent] = parents;
      if (parentId !== null && !parent) {
        throw referenceNotFound('commentParentId', 'parentId', [parentId]);
      }
      if (parent?.parentId) {
        throw new Problem(HttpStatus.BAD_REQUEST, 'nesting_too_deep', 'parentId names a reply: replies have one level only', [
          { field: 'parentId', message: 'must be a top-level comment: replies have one level only' },
        ]);
      }
      const written = COMMENT_SQL.writing(COMMENT_WRITABLE.all);
      const recorded = await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: [{ comment: commentId, action: 'created' }] },
        // The comment, its first revision (the same text, by the same key) and its mentions, in one statement.
        Prisma.sql`
          WITH created AS (
            INSERT INTO comments (id, project_id, task_id, ${written.columns}, author_key_id, author_name, revision, created_at, updated_at)
            VALUES (${commentId}::uuid, ${projectId}::uuid, ${taskId}::uuid, ${written.values(fields)}, ${caller.keyId}::uuid, ${caller.actor}, 1,
                    ${CHANGE_TIME}, ${CHANGE_TIME})
            RETURNING id, body, author_key_id, author_name, created_at),
          first_revision AS (
            INSERT INTO comment_revisions (comment_id, number, body, author_key_id, author_name, created_at)
            SELECT id, 1, body, author_key_id, author_name, created_at FROM created)
          ${insertMentions(projectId, commentId, mentions)}`,
      );
      return recorded.comments[commentId];
    });
    return { comment };
  }

  /**
   * A new text: the comment's next revision, by this key, with the mentions of the new text.
   * The same text again changes nothing (200, no revision, no event). Two edits at once apply one
   * after the other (the comment is locked FOR NO KEY UPDATE, its text read once locked): each
   * answer shows a text that is one of its revisions.
   */
  async update(caller: Caller, taskId: string, commentId: string, dto: UpdateCommentDto, ifMatch?: string): Promise<CommentResponseDto> {
    const { projectId } = caller;
    // NonEmptyBodyPipe: a PATCH body holds a field, and body is the only one it may hold.
    const body = dto.body!;
    const mentions = mentionedIds(body);
    const comment = await this.prisma.write(async (tx) => {
      const answers = await tx.pipeline<unknown[][]>(
        lockLiveTask(projectId, taskId),
        lockComments(projectId, taskId, Prisma.sql`c.id = ${commentId}::uuid AND c.deleted_at IS NULL`, 'FOR NO KEY UPDATE', LOCKED_COMMENT),
        // After the lock: the comment as it is now, for If-Match.
        ...(ifMatch !== undefined ? [commentView(projectId, commentId)] : []),
        ...(mentions.length > 0 ? [membersAmong(projectId, mentions)] : []),
      );
      const [[task], [locked]] = answers as [unknown[], LockedComment[]];
      const [current] = (ifMatch !== undefined ? answers[2] : []) as { comment: CommentDto }[];
      assertMembers(mentions, (mentions.length > 0 ? answers.at(-1) : []) as { id: string }[]);
      if (!task) throw await liveTaskNotFound(tx, caller.projectId, taskId);
      const comment = assertChangeable(caller, locked);
      await assertIfMatch(ifMatch, () => current);
      if (comment.body === body) return current?.comment ?? (await tx.rows(commentView(projectId, commentId)))[0].comment;
      const number = comment.revision + 1;
      const recorded = await this.changes.record(
        tx,
        {
          projectId,
          actor: caller.actor,
          records: [{ comment: commentId, action: 'updated', changes: [{ field: 'body', from: comment.body, to: body }] }],
        },
        Prisma.sql`
          WITH edited AS (
            UPDATE comments SET body = ${body}, revision = ${number}, edited_at = ${CHANGE_TIME}, updated_at = ${CHANGE_TIME}
             WHERE id = ${commentId}::uuid AND project_id = ${projectId}::uuid
            RETURNING id, body)
          INSERT INTO comment_revisions (comment_id, number, body, author_key_id, author_name, created_at)
          SELECT id, ${number}, body, ${caller.keyId}::uuid, ${caller.actor}, ${CHANGE_TIME} FROM edited`,
        // The mentions of the new text, in statements of their own (positions move).
        Prisma.sql`DELETE FROM comment_mentions WHERE comment_id = ${commentId}::uuid`,
        insertMentions(projectId, commentId, mentions),
      );
      return recorded.comments[commentId];
    });
    return { comment };
  }

  /**
   * Destroys the comment and its revisions. A top-level comment that still has replies stays as a
   * tombstone (no text, no mentions, no revisions; updatedAt the deletion's time). A reply goes,
   * and with it its parent when that is a tombstone left without replies (no event of its own).
   * A reply's parent is locked first (FOR UPDATE: it may go), so that two of its last replies
   * deleted at once cannot both leave it standing, nor a deletion of it miss a new reply.
   */
  async delete(caller: Caller, taskId: string, commentId: string, ifMatch?: string): Promise<void> {
    const { projectId } = caller;
    await this.prisma.write(async (tx) => {
      const [[task], [parent], [locked], [replies], current = []] = await tx.pipeline<
        [unknown[], { id: string; tombstone: boolean }[], LockedComment[], { count: number }[], { comment: CommentDto }[]]
      >(
        lockLiveTask(projectId, taskId),
        // The parent of a reply first (parent_id never changes: read from the statement's snapshot).
        lockComments(
          projectId,
          taskId,
          Prisma.sql`c.id = (SELECT r.parent_id FROM comments r WHERE r.id = ${commentId}::uuid AND r.task_id = ${taskId}::uuid)`,
          'FOR UPDATE',
          Prisma.sql`c.id::text, c.deleted_at IS NOT NULL AS tombstone`,
        ),
        lockComments(projectId, taskId, Prisma.sql`c.id = ${commentId}::uuid AND c.deleted_at IS NULL`, 'FOR UPDATE', LOCKED_COMMENT),
        // After the locks: the replies of the comment, or its parent's other replies.
        Prisma.sql`
          SELECT count(*)::int AS count FROM comments r
           WHERE r.task_id = ${taskId}::uuid AND r.id <> ${commentId}::uuid
             AND r.parent_id = COALESCE((SELECT c.parent_id FROM comments c WHERE c.id = ${commentId}::uuid), ${commentId}::uuid)`,
        ...(ifMatch !== undefined ? [commentView(projectId, commentId)] : []),
      );
      if (!task) throw await liveTaskNotFound(tx, caller.projectId, taskId);
      const comment = assertChangeable(caller, locked);
      await assertIfMatch(ifMatch, () => current[0]);
      const change: Change = {
        projectId,
        actor: caller.actor,
        records: [{ comment: commentId, action: 'deleted', deleted: { taskId, parentId: comment.parentId } }],
      };
      if (comment.parentId === null && replies.count > 0) {
        // A tombstone, so that the thread keeps its shape: no text, no mentions, no revisions.
        await this.changes.record(
          tx,
          change,
          Prisma.sql`
            UPDATE comments SET body = NULL, deleted_at = ${CHANGE_TIME}, updated_at = ${CHANGE_TIME}
             WHERE id = ${commentId}::uuid AND project_id = ${projectId}::uuid`,
          Prisma.sql`DELETE FROM comment_revisions WHERE comment_id = ${commentId}::uuid`,
          Prisma.sql`DELETE FROM comment_mentions WHERE comment_id = ${commentId}::uuid`,
        );
        return;
      }
      // Its revisions and mentions go with it (the foreign keys cascade), and a tombstone left without replies.
      const gone = parent?.tombstone && replies.count === 0 ? [commentId, parent.id] : [commentId];
      await this.changes.record(tx, change, Prisma.sql`DELETE FROM comments WHERE id = ANY(${gone}::uuid[]) AND project_id = ${projectId}::uuid`);
    });
  }
}

/** What a PATCH or DELETE reads of the comment it locked. */
interface LockedComment {
  id: string;
  parentId: string | null;
  body: string;
  authorKeyId: string;
  revision: number;
}

const LOCKED_COMMENT = Prisma.sql`c.id::text, c.parent_id::text AS "parentId", c.body, c.author_key_id::text AS "authorKeyId", c.revision`;

/** The task of the path, live in the caller's project, as the CTE `task` (its id, or no row). */
function liveTaskCte(projectId: string, taskId: string) {
  return cte('task')`SELECT t.id FROM tasks t WHERE t.id = ${taskId}::uuid AND t.project_id = ${projectId}::uuid AND t.deleted_at IS NULL`;
}

/** The task of the path, live in the caller's project, locked FOR SHARE: it stays live, and in the project, until the write commits. */
function lockLiveTask(projectId: string, taskId: string): Prisma.Sql {
  return lockTasks(projectId, Prisma.sql`t.id = ${taskId}::uuid AND t.deleted_at IS NULL`, 'FOR SHARE');
}

/** The comment as GET answers it, `{comment}`: a statement after the locks, which reads what they waited for. */
function commentView(projectId: string, commentId: string) {
  return statement<{ comment: CommentDto }>(Prisma.sql`
    SELECT ${COMMENT_JSON} AS comment FROM comments c WHERE c.id = ${commentId}::uuid AND c.project_id = ${projectId}::uuid`);
}

/**
 * The comment the write locked, there (404 otherwise), and one this
 * key may change: the key that wrote it, or one that holds content:moderate (403 naming it).
 */
function assertChangeable(caller: Caller, comment: LockedComment | undefined): LockedComment {
  if (!comment) throw notFound('Comment');
  if (comment.authorKeyId !== caller.keyId && !caller.permissions.has('content:moderate')) {
    throw insufficientPermission(
      ['content:moderate'],
      'This comment was written with another key: changing it takes the content:moderate permission',
    );
  }
  return comment;
}

/** Inserts the mentions `ids` of the comment, in order (an INSERT ... SELECT that inserts nothing for none). */
function insertMentions(projectId: string, commentId: string, ids: string[]): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO comment_mentions (comment_id, position, project_id, membership_id)
    SELECT ${commentId}::uuid, m.position, ${projectId}::uuid, m.id FROM unnest(${ids}::uuid[]) WITH ORDINALITY AS m(id, position)`;
}
