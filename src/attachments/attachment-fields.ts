import { asciiKey, fieldDecorator, fieldSql, id, instant, integer, shownField, TableOf, text } from '../common/fields/fields';
import type { Attachment } from '../generated/prisma/client';

/**
 * An attachment's fields, described once: one row per column of `attachments` (schema.prisma;
 * TableOf fails the build when a column has no row). From it come the attachment's JSON view
 * (attachment-view.sql.ts) and the OpenAPI properties of its answer. Every field is the
 * service's: an upload is multipart (upload.ts reads it), not a JSON body. What an answer shows
 * that is not a column (`author`, `downloadUrl`, `downloadUrlExpiresAt`) is added by the view and
 * by the service.
 */
export const ATTACHMENT_FIELDS = {
  id: { column: 'id', kind: id(), write: 'service', shown: 'list' },
  projectId: { column: 'project_id', kind: id(), write: 'service', shown: { not: 'an attachment answer is always of the caller’s project' } },
  taskId: { column: 'task_id', kind: id(), write: 'service', shown: 'list' },
  name: { column: 'name', kind: text(1, 255), write: 'service', shown: 'list' },
  size: { column: 'size', kind: integer(1, 2_147_483_647), write: 'service', shown: 'list' },
  contentType: { column: 'content_type', kind: asciiKey(255), write: 'service', shown: 'list' },
  sha256: { column: 'sha256', kind: asciiKey(64), write: 'service', shown: 'list' },
  authorKeyId: { column: 'author_key_id', kind: id(), write: 'service', shown: { not: 'shown as `author` (attachment-view.sql.ts)' } },
  authorName: { column: 'author_name', kind: text(1, 200), write: 'service', shown: { not: 'shown as `author` (attachment-view.sql.ts)' } },
  createdAt: { column: 'created_at', kind: instant(), write: 'service', shown: 'list' },
} as const satisfies TableOf<Attachment>;

/** The SQL derived from ATTACHMENT_FIELDS, on the attachment row `a`. */
export const ATTACHMENT_SQL = fieldSql(ATTACHMENT_FIELDS, 'a');

/** On an answer DTO's property: the OpenAPI property of its ATTACHMENT_FIELDS row. */
export const AttachmentAnswerField = fieldDecorator(ATTACHMENT_FIELDS, shownField, 'AttachmentAnswerField');
