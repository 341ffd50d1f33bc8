import { ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerGuard,
  ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Problem } from '../common/errors/problem';
import { surfaceOf } from '../common/http/surface';
import { ApiKeyService } from './api-key.service';

/**
 * The rate limit of decisions.md sections 10 and 21, on @nestjs/throttler, RATE_LIMIT_PER_MINUTE
 * requests per counter:
 * - an /api/v1 request with a live key counts against that key, across all routes;
 * - an /api/v1 request without one (no key, an unknown or a revoked one) counts against its
 *   client address, so guessing keys is throttled;
 * - every /admin/v1 request counts against its client address, in a counter of the admin
 *   interface's own, whether or not its token is right.
 * Answered with RateLimit-Limit, -Remaining and -Reset on every answer it counts, and 429
 * rate_limited with Retry-After past the limit. It runs before ApiKeyGuard and AdminTokenGuard,
 * so 401 answers carry the headers too. The counters live in memory, or in Redis when REDIS_URL
 * is set (auth.module.ts).
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override headerPrefix = 'RateLimit';

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly apiKeys: ApiKeyService,
  ) {
    super(options, storage, reflector);
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return surfaceOf(context.switchToHttp().getRequest<Request>()) === 'other';
  }

  protected override async getTracker(request: Request): Promise<string> {
    // An IPv6 client is counted by its /64, as the library does: one host may hold all of it.
    const address = normalizeIp(request.ip ?? 'unknown', this.ipv6SubnetPrefix);
    if (surfaceOf(request) === 'admin') return `admin-address:${address}`;
    // A look-up that fails (the database unreachable) counts against the address; ApiKeyGuard
    // then answers that failure (503), with this guard's RateLimit-* headers like any answer.
    const caller = await this.apiKeys.liveKeyOf(request).catch(() => null);
    return caller ? `key:${caller.keyId}` : `address:${address}`;
  }

  /** The library sets only Retry-After on a 429; the RateLimit-* headers belong on every answer. */
  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const response = context.switchToHttp().getResponse<Response>();
    response.setHeader(`${this.headerPrefix}-Limit`, detail.limit);
    response.setHeader(`${this.headerPrefix}-Remaining`, 0);
    response.setHeader(`${this.headerPrefix}-Reset`, detail.timeToBlockExpire);
    const who = detail.tracker.startsWith('key:') ? 'for this key' : 'from this address';
    throw new Problem(HttpStatus.TOO_MANY_REQUESTS, 'rate_limited', `Too many requests ${who}; retry after the number of seconds in Retry-After`);
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `rate-limit:${throttlerName}:${tracker}`;
  }
}
