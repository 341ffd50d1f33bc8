import { ApiProperty } from '@nestjs/swagger';
import { SameKeys, ShownField, requireFieldDecorators, shownFields } from '../common/fields/fields';
import { ATTACHMENT_FIELDS, AttachmentAnswerField } from './attachment-fields';
import type { ATTACHMENT_RELATION_VIEWS, DOWNLOAD_LINK_KEYS } from './attachment-view.sql';

/** Who uploaded an attachment: the key, and its name as history writes actors. */
export class AttachmentAuthorDto {
  @ApiProperty({ format: 'uuid' })
  keyId: string;
  /** "<key name> (API)". */
  name: string;
}

/** An attachment as events show it (attachment.created): without the download link. */
export class AttachmentEventDto {
  @AttachmentAnswerField()
  id: string;
  @AttachmentAnswerField()
  taskId: string;
  /** The file's name: 1 to 255 characters (code points), no / \ or control characters. */
  @AttachmentAnswerField()
  name: string;
  /** Bytes. */
  @AttachmentAnswerField()
  size: number;
  /** What the bytes are, from their magic numbers (never what the client declared); text/plain for UTF-8 text without NUL, else application/octet-stream. */
  @AttachmentAnswerField()
  contentType: string;
  /** Lower-case hex SHA-256 of the bytes. */
  @AttachmentAnswerField()
  @ApiProperty({ pattern: '^[0-9a-f]{64}$' })
  sha256: string;
  /** The key that uploaded it. */
  author: AttachmentAuthorDto;
  @AttachmentAnswerField()
  createdAt: string;
}

export class AttachmentDto extends AttachmentEventDto {
  /** The bytes without a key (an <img> tag, a plain download) until downloadUrlExpiresAt, and while the attachment is live. */
  @ApiProperty({ format: 'uri' })
  downloadUrl: string;
  /** 15 minutes after this answer. */
  @ApiProperty({ format: 'date-time' })
  downloadUrlExpiresAt: string;
}

// Answers show exactly ATTACHMENT_FIELDS' shown fields, the relation views and the download link.
const _attachmentEventHasEveryField: SameKeys<
  keyof AttachmentEventDto,
  ShownField<typeof ATTACHMENT_FIELDS, 'list'> | keyof typeof ATTACHMENT_RELATION_VIEWS,
  'AttachmentEventDto'
> = true;
const _attachmentHasTheLink: SameKeys<
  Exclude<keyof AttachmentDto, keyof AttachmentEventDto>,
  (typeof DOWNLOAD_LINK_KEYS)[number],
  'AttachmentDto'
> = true;
requireFieldDecorators(AttachmentEventDto, AttachmentAnswerField, shownFields(ATTACHMENT_FIELDS, 'list'), 'ATTACHMENT_FIELDS shows it');

export class AttachmentResponseDto {
  attachment: AttachmentDto;
}

export class AttachmentListDto {
  /** Oldest first (createdAt, then id); at most 100, so no pages. */
  attachments: AttachmentDto[];
}

/** What attachment.deleted shows of a deleted attachment: which it was, and where. */
export class DeletedAttachmentDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  taskId: string;
}

/** The multipart body of an upload, as the OpenAPI document describes it (upload.ts reads it as a stream). */
export class UploadAttachmentDto {
  /** The file: its bytes, and its filename (the attachment's name unless `name` is sent; a path keeps its last segment). */
  @ApiProperty({ type: 'string', format: 'binary' })
  file: unknown;
  /** The attachment's name instead of the file's: 1 to 255 characters, no / \ or control characters. */
  @ApiProperty({ required: false, minLength: 1, maxLength: 255 })
  name?: string;
}
