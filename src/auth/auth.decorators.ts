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

/** Names the permissions of an operation for the OpenAPI document's 403 example (src/openapi.ts removes it). */
export const REQUIRED_PERMISSION_EXTENSION = 'x-required-permission';

/**
 * A write route: the key needs `permission`, or one of `alternatives` (else 403 naming
 * `permission`). `forbidden` adds what else the service refuses with 403 (the OpenAPI description).
 */
export function RequirePermission(permission: Permission, options: { alternatives?: Permission[]; forbidden?: string } = {}): MethodDecorator {
  const required = [permission, ...(options.alternatives ?? [])];
  const lacks = `The key lacks the ${required.join(' and the ')} permission${required.length > 1 ? 's' : ''}`;
  return applyDecorators(
    SetMetadata(REQUIRED_PERMISSION, required),
    ApiForbiddenResponse({ description: options.forbidden ? `${lacks}; or ${options.forbidden}` : lacks, type: ProblemDto }),
    ApiExtension(REQUIRED_PERMISSION_EXTENSION, required),
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
