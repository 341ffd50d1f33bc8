import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiForbiddenResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { ProblemDto } from '../common/errors/problem.dto';
import type { Caller } from './caller';
import type { Permission } from './permissions';

export const REQUIRED_PERMISSION = 'auth:requiredPermission';
/** Routes that ApiKeyGuard leaves alone: `public` (no key) or `admin` (AdminTokenGuard). */
export const AUTH_EXEMPT = 'auth:exempt';

/**
 * On an /api/v1 controller: every route needs a project key (ApiKeyGuard, global).
 * Documents the bearer scheme; src/openapi.ts adds the 401 and 429 answers it implies.
 */
export function ApiKeyAuthenticated(): ClassDecorator {
  return ApiBearerAuth('api-key');
}

/** Names the permission of an operation for the OpenAPI document's 403 example (src/openapi.ts removes it). */
export const REQUIRED_PERMISSION_EXTENSION = 'x-required-permission';

/** A write route: the key needs `permission` (else 403 naming it). */
export function RequirePermission(permission: Permission): MethodDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_PERMISSION, permission),
    ApiForbiddenResponse({ description: `The key lacks the ${permission} permission`, type: ProblemDto }),
    ApiExtension(REQUIRED_PERMISSION_EXTENSION, permission),
  );
}

/** Marks an operation of the OpenAPI document that src/openapi.ts declares `security: []`. */
export const PUBLIC_OPERATION = 'x-public';

/** A route or controller anyone may call without a key (health checks); documented as such. */
export const Public = () => applyDecorators(SetMetadata(AUTH_EXEMPT, 'public'), ApiExtension(PUBLIC_OPERATION, true));

/** The project key of the request, resolved by ApiKeyGuard. */
export const CurrentCaller = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => {
  const caller = context.switchToHttp().getRequest<Request>().caller;
  if (!caller) throw new Error('CurrentCaller used on a route that ApiKeyGuard does not authenticate');
  return caller;
});
