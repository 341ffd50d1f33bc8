import { HttpException, HttpStatus } from '@nestjs/common';

/** The stable, machine-readable `code` of every error the service answers (decisions.md section 1); the OpenAPI document lists them. */
export const PROBLEM_CODES = [
  'validation_failed',
  'unknown_field',
  'read_only_field',
  'empty_body',
  'malformed_json',
  'invalid_cursor',
  'invalid_filter',
  'invalid_date_window',
  'nesting_too_deep',
  'unauthenticated',
  'insufficient_permission',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'dependency_cycle',
  'dependency_exists',
  'payload_too_large',
  'attachment_too_large',
  'storage_quota_exceeded',
  'range_not_satisfiable',
  'request_header_too_large',
  'malformed_request',
  'request_timeout',
  'expectation_failed',
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
] as const;

export type ProblemCode = (typeof PROBLEM_CODES)[number];

export interface FieldError {
  field: string;
  message: string;
}

/**
 * An error the service means to answer, turned into RFC 9457 problem+json by
 * ProblemDetailsFilter. Throw it through the helpers below.
 */
export class Problem extends HttpException {
  constructor(
    status: HttpStatus,
    readonly code: ProblemCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    /** Extra members of the problem object, such as `requiredPermission`. */
    readonly extensions: Record<string, unknown> = {},
    /** Headers of the answer, such as the current `ETag` of a 412 or `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail, status);
  }
}

/** Problems listed in one answer's `errors`, at most: an answer stays small whatever the body holds. */
export const MAX_LISTED_ERRORS = 100;

/** A 400 for field-level problems: `errors` lists the first MAX_LISTED_ERRORS, `detail` sums them up and counts the rest. */
export function invalidFields(code: ProblemCode, errors: FieldError[]): Problem {
  const listed = errors.slice(0, MAX_LISTED_ERRORS);
  const unlisted = errors.length - listed.length;
  const detail = listed.map((error) => `${error.field} ${error.message}`).join('; ');
  const more = unlisted === 0 ? '' : `; and ${unlisted} more ${unlisted === 1 ? 'problem' : 'problems'}`;
  return new Problem(HttpStatus.BAD_REQUEST, code, detail + more, listed);
}

export function badRequest(code: ProblemCode, detail: string, field?: string): Problem {
  return new Problem(HttpStatus.BAD_REQUEST, code, detail, field ? [{ field, message: detail }] : undefined);
}

export function notFound(what: string): Problem {
  return new Problem(HttpStatus.NOT_FOUND, 'not_found', `${what} not found`);
}

export function conflict(
  code: Extract<ProblemCode, 'conflict' | 'dependency_cycle' | 'dependency_exists' | 'idempotency_in_progress'>,
  detail: string,
): Problem {
  return new Problem(HttpStatus.CONFLICT, code, detail);
}
