import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { RouteTable } from '../common/http/routes';
import { ApiKeyService } from './api-key.service';
import { AUTH_EXEMPT, REQUIRED_PERMISSION } from './auth.decorators';
import { insufficientPermission, type Permission } from './permissions';

/**
 * The global guard of every route: resolves `Authorization: Bearer <key>` to its
 * project (401 otherwise) and checks the route's permission (403 naming it). Routes
 * marked @Public or served by the admin interface are left to their own rules.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeyService,
    private readonly routes: RouteTable,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride(AUTH_EXEMPT, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<Request>();
    // A typo is a typo before the key is read (decisions.md section 26).
    this.routes.assertNamesItsRoute(request);
    const caller = await this.apiKeys.authenticate(request);
    request.caller = caller;
    // The route's permission, or any of its alternatives (a moderator's, say); the 403 names the first.
    const required = this.reflector.get<[Permission, ...Permission[]] | undefined>(REQUIRED_PERMISSION, context.getHandler());
    if (required && !required.some((permission) => caller.permissions.has(permission))) throw insufficientPermission(required);
    return true;
  }
}
