import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiTooManyRequestsResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { ProblemDto } from '../common/errors/problem.dto';
import type { Caller } from './caller';
import type { Permission } from './permissions';

export const REQUIRED_PERMISSION = 'auth:requiredPermission';
/** Routes that ApiKeyGuard leaves alone: `public` (no key) or `admin` (AdminTokenGuard). */
export const AUTH_EXEMPT = 'auth:exempt';

/**
 * On an /api/v1 controller: every route needs a project key (ApiKeyGuard, global).
 * Documents the bearer scheme and the 401 and 429 answers.
 */
export function ApiKeyAuthenticated(): ClassDecorator {
  return applyDecorators(
    ApiBearerAuth('api-key'),
    ApiUnauthorizedResponse({ description: 'No key, not a Bearer key, or an unknown or revoked key', type: ProblemDto }),
    ApiTooManyRequestsResponse({ description: 'Over the rate limit of the key; see Retry-After', type: ProblemDto }),
  );
}

/** A write route: the key needs `permission` (else 403 naming it). */
export function RequirePermission(permission: Permission): MethodDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_PERMISSION, permission),
    ApiForbiddenResponse({ description: `The key lacks the ${permission} permission`, type: ProblemDto }),
  );
}

/** A route anyone may call without a key (health checks). */
export const Public = () => SetMetadata(AUTH_EXEMPT, 'public');

/** The project key of the request, resolved by ApiKeyGuard. */
export const CurrentCaller = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => {
  const caller = context.switchToHttp().getRequest<Request>().caller;
  if (!caller) throw new Error('CurrentCaller used on a route that ApiKeyGuard does not authenticate');
  return caller;
});
