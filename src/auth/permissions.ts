import { HttpStatus } from '@nestjs/common';
import { Problem } from '../common/errors/problem';

/** Key permissions (decisions.md sections 2, 23 and 24). Reads need none. */
export const ALL_PERMISSIONS = [
  'tasks:create',
  'tasks:edit',
  'tasks:delete',
  'sprints:manage',
  'webhooks:manage',
  'comments:write',
  'content:moderate',
  'attachments:write',
] as const;

export type Permission = (typeof ALL_PERMISSIONS)[number];

/**
 * The 403 of a key that holds none of `required` (decisions.md section 1): the problem names the
 * first in `requiredPermission`, and the detail the others that would do too (a moderator's).
 */
export function insufficientPermission(required: readonly [Permission, ...Permission[]], detail?: string): Problem {
  const [permission, ...others] = required;
  detail ??= `This key lacks the ${permission} permission${others.length ? ` (or ${others.join(', ')})` : ''}`;
  return new Problem(HttpStatus.FORBIDDEN, 'insufficient_permission', detail, undefined, { requiredPermission: permission });
}
