import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ALL_PERMISSIONS } from '../../auth/permissions';
import { PROBLEM_CODES } from './problem';

export class FieldErrorDto {
  /** The field or query parameter, in the API's names (`tasks[3].title` for a field of an item). */
  field: string;
  message: string;
}

/** RFC 9457 problem details, sent as application/problem+json by every error answer. */
export class ProblemDto {
  /** Always about:blank: `code` says what happened. */
  @ApiProperty({ example: 'about:blank' })
  type: string;
  @ApiProperty({ example: 'Bad Request' })
  title: string;
  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, example: 400 })
  status: number;
  @ApiProperty({ example: 'title must be 1 to 200 characters' })
  detail: string;
  /** Stable machine-readable word (decisions.md section 1). */
  @ApiProperty({ enum: PROBLEM_CODES, example: 'validation_failed' })
  code: string;
  /** Present for field-level problems. */
  errors?: FieldErrorDto[];
  /** Present on 403: the permission the key lacks. */
  @ApiPropertyOptional({ enum: ALL_PERMISSIONS, example: 'tasks:edit' })
  requiredPermission?: string;
  /** Present (true) on the 404 of a live-task endpoint when the task is in the trash: POST /api/v1/trash/{taskId}/restore brings it back. */
  inTrash?: boolean;
  /** Present on 400 invalid_filter: the 0-based offset in `filter` of the first character that does not fit. */
  @ApiPropertyOptional({ type: 'integer', minimum: 0, example: 12 })
  position?: number;
  /** Present on the 409 of an activation while another sprint is active: that sprint. */
  @ApiPropertyOptional({ format: 'uuid' })
  activeSprintId?: string;
  /** Present on the 413 of an upload: ATTACHMENT_MAX_BYTES (attachment_too_large) or ATTACHMENT_QUOTA_BYTES (storage_quota_exceeded). */
  @ApiPropertyOptional({ type: 'integer', minimum: 1 })
  limit?: number;
  /** Present on storage_quota_exceeded: the bytes the project's live and trashed attachments held before this upload. */
  @ApiPropertyOptional({ type: 'integer', minimum: 0 })
  used?: number;
}
