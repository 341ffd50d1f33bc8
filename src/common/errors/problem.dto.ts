import { ApiProperty } from '@nestjs/swagger';

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
  @ApiProperty({ example: 400 })
  status: number;
  @ApiProperty({ example: 'title must be 1 to 200 characters' })
  detail: string;
  /** Stable machine-readable word (decisions.md section 1). */
  @ApiProperty({
    example: 'validation_failed',
    enum: [
      'validation_failed',
      'unknown_field',
      'read_only_field',
      'empty_body',
      'malformed_json',
      'invalid_cursor',
      'invalid_date_window',
      'nesting_too_deep',
      'unauthenticated',
      'insufficient_permission',
      'not_found',
      'conflict',
      'dependency_cycle',
      'dependency_exists',
      'payload_too_large',
      'unsupported_media_type',
      'rate_limited',
      'service_unavailable',
      'invalid_idempotency_key',
      'idempotency_key_reused',
      'idempotency_in_progress',
      'precondition_failed',
      'events_expired',
      'invalid_webhook_url',
      'database_unavailable',
      'internal',
    ],
  })
  code: string;
  /** Present for field-level problems. */
  errors?: FieldErrorDto[];
  /** Present on 403: the permission the key lacks. */
  @ApiProperty({ required: false, example: 'tasks:edit' })
  requiredPermission?: string;
}
