import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { Readable } from 'node:stream';
import type { Caller } from '../auth/caller';
import { insufficientPermission } from '../auth/permissions';
import { ChangeLog } from '../changes/change-log.service';
import { CHANGE_TIME } from '../changes/change';
import { lockAttachments, lockTasks } from '../changes/locks';
import { conflict, notFound } from '../common/errors/problem';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { PrismaService } from '../database/prisma.service';
import { cte, statement, withCtes } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { idempotencyKeyOf } from '../idempotency/idempotency.interceptor';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { liveTaskNotFound } from '../tasks/live-task-not-found';
import { attachmentsLock, AttachmentBytes, bytesKey } from './attachment-bytes.service';
import { ATTACHMENT_JSON } from './attachment-view.sql';
import type { AttachmentDto, AttachmentEventDto, AttachmentListDto, AttachmentResponseDto } from './attachment.dto';
import { serveContent } from './content-answer';
import { DownloadLinks } from './download-links';
import { UploadInspector } from './content-type';
import { ATTACHMENT_STORE, type AttachmentStore } from './storage/attachment-store';
import { dropRestOfBody, isMultipart, notMultipart, quotaExceeded, receiveUpload, type ReceivedUpload } from './upload-reader';

/** decisions.md section 24: the 101st attachment of a task is 409. */
export const MAX_ATTACHMENTS_PER_TASK = 100;

/** What the content route and the delete read of an attachment. */
interface StoredAttachment {
  id: string;
  name: string;
  size: number;
  contentType: string;
  sha256: string;
  projectId: string;
}

const STORED = Prisma.sql`a.id::text, a.name, a.size, a.content_type AS "contentType", a.sha256, a.project_id::text AS "projectId"`;

/**
 * A task's attachments (decisions.md section 24). Reads find the task live in the caller's
 * project first (a task in the trash: 404 with the trash hint, src/tasks/live-task-not-found.ts).
 * An upload streams its bytes to a temporary object before any transaction opens; then, under
 * the project's `attachments:<project>` advisory lock and its task FOR SHARE, it checks the
 * quota and the count, promotes the bytes to their key and records the row and its event.
 */
@Injectable()
export class AttachmentsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly changes: ChangeLog,
    private readonly idempotency: IdempotencyService,
    private readonly links: DownloadLinks,
    private readonly bytes: AttachmentBytes,
    @Inject(ATTACHMENT_STORE) private readonly store: AttachmentStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The task's attachments, oldest first. */
  async list(caller: Caller, req: Request, taskId: string): Promise<AttachmentListDto> {
    const [row] = await this.prisma.sql.rows(
      statement<{ found: boolean; attachments: AttachmentEventDto[] }>(withCtes([liveTaskCte(caller.projectId, taskId)])`
        SELECT EXISTS (SELECT FROM task) AS found,
               (SELECT COALESCE(json_agg(${ATTACHMENT_JSON} ORDER BY a.created_at, a.id), '[]'::json)
                  FROM attachments a WHERE a.task_id = (SELECT id FROM task)) AS attachments`),
    );
    if (!row.found) throw await liveTaskNotFound(this.prisma.sql, caller.projectId, taskId);
    const now = Date.now();
    return { attachments: row.attachments.map((attachment) => this.withLink(req, attachment, now)) };
  }

  async get(caller: Caller, req: Request, taskId: string, attachmentId: string): Promise<AttachmentResponseDto> {
    const [row] = await this.prisma.sql.rows(
      statement<{ found: boolean; attachment: AttachmentEventDto | null }>(withCtes([liveTaskCte(caller.projectId, taskId)])`
        SELECT EXISTS (SELECT FROM task) AS found,
               (SELECT ${ATTACHMENT_JSON} FROM attachments a WHERE a.id = ${attachmentId}::uuid AND a.task_id = (SELECT id FROM task)) AS attachment`),
    );
    if (!row.found) throw await liveTaskNotFound(this.prisma.sql, caller.projectId, taskId);
    if (!row.attachment) throw notFound('Attachment');
    return { attachment: this.withLink(req, row.attachment) };
  }

  /** The bytes, with the headers of decisions.md section 24 (content-answer.ts). */
  async content(caller: Caller, req: Request, res: Response, taskId: string, attachmentId: string): Promise<void> {
    const [row] = await this.prisma.sql.rows(
      statement<{ found: boolean; attachment: StoredAttachment | null }>(withCtes([liveTaskCte(caller.projectId, taskId)])`
        SELECT EXISTS (SELECT FROM task) AS found,
               (SELECT row_to_json(s) FROM (SELECT ${STORED} FROM attachments a WHERE a.id = ${attachmentId}::uuid AND a.task_id = (SELECT id FROM task)) s) AS attachment`),
    );
    if (!row.found) throw await liveTaskNotFound(this.prisma.sql, caller.projectId, taskId);
    if (!row.attachment) throw notFound('Attachment');
    await this.serve(req, res, row.attachment);
  }

  /**
   * A downloadUrl: 403 unless signed here and not expired (saying nothing more), then 404 unless
   * the attachment is live. Any changed id is a changed URL (403), one that is no UUID (NO_ID,
   * from PathIdPipe) too: no link is ever signed for it.
   */
  async download(req: Request, res: Response, attachmentId: string, query: Record<string, unknown>): Promise<void> {
    this.links.verify(attachmentId, query);
    const [attachment] = await this.prisma.sql.rows(
      statement<StoredAttachment>(Prisma.sql`
        SELECT ${STORED} FROM attachments a JOIN tasks t ON t.id = a.task_id AND t.project_id = a.project_id
         WHERE a.id = ${attachmentId}::uuid AND t.deleted_at IS NULL`),
    );
    if (!attachment) throw notFound('Attachment');
    await this.serve(req, res, attachment);
  }

  /**
   * An upload (decisions.md section 24): 415 unless multipart, 404 unless the task is live, then
   * the body streamed to a temporary object (upload-reader.ts), then the commit. With an
   * Idempotency-Key, the replay or 422 is decided once the body is read: its fingerprint is the
   * method, the path and the file's name, size and SHA-256.
   */
  async upload(caller: Caller, req: Request, res: Response, taskId: string): Promise<AttachmentResponseDto | string | undefined> {
    const idempotencyKey = idempotencyKeyOf(req);
    const { projectId } = caller;
    // Before reading: whether the task is live, and the room the quota leaves (checked again at commit, under the lock).
    const [state] = await this.prisma.sql.rows(
      statement<{ found: boolean; used: string }>(withCtes([liveTaskCte(projectId, taskId)])`
        SELECT EXISTS (SELECT FROM task) AS found, ${usedBytes(projectId)} AS used`),
    );
    if (!state.found) {
      dropRestOfBody(req, res);
      throw await liveTaskNotFound(this.prisma.sql, projectId, taskId);
    }
    if (!isMultipart(req)) {
      dropRestOfBody(req, res);
      throw notMultipart();
    }
    const used = Number(state.used);
    const limit = this.config.attachmentQuotaBytes;
    const received = await receiveUpload(req, res, this.store, {
      maxBytes: this.config.attachmentMaxBytes,
      room: Math.max(0, limit - used),
      quota: { limit, used },
    });
    let promoted = false;
    try {
      const commit = async (): Promise<AttachmentResponseDto> => {
        const created = await this.commit(caller, taskId, received);
        promoted = true;
        res.location(`/api/v1/tasks/${taskId}/attachments/${created.id}`);
        return { attachment: this.withLink(req, created) };
      };
      if (idempotencyKey === undefined) return await commit();
      const fingerprint = createHash('sha256')
        .update(JSON.stringify([req.method, req.originalUrl, received.name, received.size, received.sha256]))
        .digest('hex');
      return await this.idempotency.run(caller.keyId, idempotencyKey, fingerprint, res, commit);
    } finally {
      // Promoted, it is gone already (one request less before the answer); otherwise (a refusal, a replay) nothing keeps it.
      if (!promoted) await this.store.remove(received.temporaryKey).catch(() => undefined);
    }
  }

  /** Attaches `bytes` as `name` to the task without HTTP: the demo project's file (src/demo). */
  async attachBytes(caller: Caller, taskId: string, name: string, bytes: Buffer): Promise<AttachmentEventDto> {
    const inspector = new UploadInspector(() => undefined);
    const temporaryKey = await this.store.writeTemporary(Readable.from([bytes]).pipe(inspector));
    try {
      return await this.commit(caller, taskId, {
        name,
        temporaryKey,
        size: inspector.size,
        sha256: inspector.sha256(),
        contentType: inspector.contentType(),
      });
    } finally {
      await this.store.remove(temporaryKey).catch(() => undefined);
    }
  }

  private async commit(caller: Caller, taskId: string, received: ReceivedUpload): Promise<AttachmentEventDto> {
    const { projectId } = caller;
    const attachmentId = randomUUID();
    const created = await this.prisma.write(async (tx) => {
      // The lock order (src/changes/locks.ts): the project's attachments lock, then the task.
      // After both: the usage and the task's count as the uploads before this one committed them.
      const [, [task], [counts]] = await tx.pipeline(
        attachmentsLock(projectId),
        statement<{ id: string }>(lockTasks(projectId, Prisma.sql`t.id = ${taskId}::uuid AND t.deleted_at IS NULL`, 'FOR SHARE')),
        statement<{ used: string; count: number }>(Prisma.sql`
          SELECT ${usedBytes(projectId)} AS used,
                 (SELECT count(*)::int FROM attachments a WHERE a.task_id = ${taskId}::uuid AND a.project_id = ${projectId}::uuid) AS count`),
      );
      if (!task) throw await liveTaskNotFound(tx, projectId, taskId);
      if (counts.count >= MAX_ATTACHMENTS_PER_TASK) {
        throw conflict('conflict', `A task has at most ${MAX_ATTACHMENTS_PER_TASK} attachments: delete one first`);
      }
      const used = Number(counts.used);
      if (used + received.size > this.config.attachmentQuotaBytes) throw quotaExceeded({ limit: this.config.attachmentQuotaBytes, used });
      // Under the lock until the row commits: a removal of the same bytes waits, then sees the row.
      await this.store.promote(received.temporaryKey, bytesKey(projectId, received.sha256));
      const recorded = await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: [{ attachment: attachmentId, action: 'created' }] },
        Prisma.sql`
          INSERT INTO attachments (id, project_id, task_id, name, size, content_type, sha256, author_key_id, author_name, created_at)
          VALUES (${attachmentId}::uuid, ${projectId}::uuid, ${taskId}::uuid, ${received.name}, ${received.size}, ${received.contentType},
                  ${received.sha256}, ${caller.keyId}::uuid, ${caller.actor}, ${CHANGE_TIME})`,
      );
      return recorded.attachments[attachmentId];
    });
    return created;
  }

  /** Deletes the attachment (its uploader's key, or content:moderate); its bytes go after the commit unless another attachment of the project shares them. */
  async delete(caller: Caller, taskId: string, attachmentId: string): Promise<void> {
    const { projectId } = caller;
    await this.prisma.write(async (tx) => {
      const [[task], [attachment]] = await tx.pipeline(
        statement<{ id: string }>(lockTasks(projectId, Prisma.sql`t.id = ${taskId}::uuid AND t.deleted_at IS NULL`, 'FOR SHARE')),
        statement<{ authorKeyId: string; sha256: string }>(
          lockAttachments(
            projectId,
            taskId,
            Prisma.sql`a.id = ${attachmentId}::uuid`,
            'FOR UPDATE',
            Prisma.sql`a.author_key_id::text AS "authorKeyId", a.sha256`,
          ),
        ),
      );
      if (!task) throw await liveTaskNotFound(tx, projectId, taskId);
      if (!attachment) throw notFound('Attachment');
      if (attachment.authorKeyId !== caller.keyId && !caller.permissions.has('content:moderate')) {
        throw insufficientPermission(
          ['content:moderate'],
          'This attachment was uploaded with another key: deleting it takes the content:moderate permission',
        );
      }
      await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: [{ attachment: attachmentId, action: 'deleted', deleted: { taskId } }] },
        Prisma.sql`DELETE FROM attachments WHERE id = ${attachmentId}::uuid AND project_id = ${projectId}::uuid`,
      );
      this.bytes.releaseAfterCommit(tx, projectId, [attachment.sha256]);
    });
  }

  private serve(req: Request, res: Response, attachment: StoredAttachment): Promise<void> {
    return serveContent(req, res, attachment, (range) => this.store.read(bytesKey(attachment.projectId, attachment.sha256), range));
  }

  private withLink(req: Request, attachment: AttachmentEventDto, now = Date.now()): AttachmentDto {
    return { ...attachment, ...this.links.linkFor(req, attachment.id, now) };
  }
}

/** The bytes of the project's live and trashed attachments, as text (a sum may pass 2^53 in theory; the driver's bigint is text). */
function usedBytes(projectId: string): Prisma.Sql {
  return Prisma.sql`(SELECT COALESCE(sum(a.size), 0)::text FROM attachments a WHERE a.project_id = ${projectId}::uuid)`;
}

/** The task of the path, live in the caller's project, as the CTE `task`. */
function liveTaskCte(projectId: string, taskId: string) {
  return cte('task')`SELECT t.id FROM tasks t WHERE t.id = ${taskId}::uuid AND t.project_id = ${projectId}::uuid AND t.deleted_at IS NULL`;
}
