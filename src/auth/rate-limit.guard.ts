import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerLimitDetail } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { bearerKeyHash } from './api-keys';

/**
 * The rate limit per key of decisions.md section 10, on @nestjs/throttler: one
 * counter per key across all /api/v1 routes (per client address for requests without a
 * key), answered with RateLimit-Limit, -Remaining and -Reset on every /api/v1 answer and
 * Retry-After on a 429. It runs before ApiKeyGuard, so 401 answers carry the headers too.
 * The counters live in memory, or in Redis when REDIS_URL is set (auth.module.ts).
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override headerPrefix = 'RateLimit';

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return !context.switchToHttp().getRequest<Request>().path.startsWith('/api/');
  }

  protected override async getTracker(request: Request): Promise<string> {
    const keyHash = bearerKeyHash(request);
    return keyHash ? `key:${keyHash}` : `address:${request.ip}`;
  }

  /** The library sets only Retry-After on a 429; the RateLimit-* headers belong on every answer. */
  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const response = context.switchToHttp().getResponse<Response>();
    response.setHeader(`${this.headerPrefix}-Limit`, detail.limit);
    response.setHeader(`${this.headerPrefix}-Remaining`, 0);
    response.setHeader(`${this.headerPrefix}-Reset`, detail.timeToBlockExpire);
    return super.throwThrottlingException(context, detail);
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `rate-limit:${throttlerName}:${tracker}`;
  }
}
