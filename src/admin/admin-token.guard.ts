import { applyDecorators, CanActivate, ExecutionContext, HttpStatus, Inject, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { AUTH_EXEMPT } from '../auth/auth.decorators';
import { bearerToken } from '../auth/bearer-token';
import { Problem } from '../common/errors/problem';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * The admin interface answers only `Authorization: Bearer <ADMIN_TOKEN>`, compared in
 * constant time; project keys are refused like any other wrong token (401).
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = digest(config.adminToken ?? '');
  }

  canActivate(context: ExecutionContext): boolean {
    const token = bearerToken(context.switchToHttp().getRequest<Request>());
    // Comparing digests keeps the comparison constant-time whatever the lengths.
    if (token === null || !timingSafeEqual(digest(token), this.expected)) {
      throw new Problem(HttpStatus.UNAUTHORIZED, 'unauthenticated', 'The admin interface needs Authorization: Bearer <ADMIN_TOKEN>');
    }
    return true;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** On an admin controller: ADMIN_TOKEN instead of a project key (src/openapi.ts documents the 401). */
export function AdminAuthenticated(): ClassDecorator {
  return applyDecorators(SetMetadata(AUTH_EXEMPT, 'admin'), UseGuards(AdminTokenGuard), ApiBearerAuth('admin-token'));
}
