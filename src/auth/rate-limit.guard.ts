import { ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerGuard,
  ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerRequest,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Problem } from '../common/errors/problem';
import { surfaceOf } from '../common/http/surface';
import { ApiKeyService } from './api-key.service';
import type { Caller } from './caller';
import type { RateLimitStorage } from './rate-limit.storage';

/** Keys remembered as live (RateLimitGuard): past this, the one seen longest ago is forgotten. */
const REMEMBERED_LIVE_KEYS = 10_000;

/**
 * The rate limit of decisions.md sections 10 and 21: a live key counts against itself alone,
 * anything else against its address (guessing keys is throttled), /admin/v1 against a counter of
 * its own. Before the auth guards, so that 401s carry the headers too. A guess from a blocked
 * address costs one index probe at most; a live key over its limit, none when seen recently.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override headerPrefix = 'RateLimit';
  /** The hash of each key recently looked up as live, to its id; the one seen longest ago first. */
  private readonly liveKeyIds = new Map<string, string>();

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() private readonly counters: RateLimitStorage,
    reflector: Reflector,
    private readonly apiKeys: ApiKeyService,
  ) {
    super(options, counters, reflector);
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return surfaceOf(context.switchToHttp().getRequest<Request>()) === 'other';
  }

  /** The library's, with a tracker that may peek at the throttler's counters first. */
  protected override handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const name = props.throttler.name ?? 'default';
    const isBlocked = (tracker: string) => this.counters.isBlocked(props.generateKey(props.context, tracker, name), name);
    return super.handleRequest({ ...props, getTracker: (request) => this.trackerOf(request as Request, isBlocked) });
  }

  private async trackerOf(request: Request, isBlocked: (tracker: string) => boolean): Promise<string> {
    // An IPv6 client is counted by its /64, as the library does: one host may hold all of it.
    const address = `address:${normalizeIp(request.ip ?? 'unknown', this.ipv6SubnetPrefix)}`;
    if (surfaceOf(request) === 'admin') return `admin-${address}`;
    const keyHash = this.apiKeys.keyHashOf(request);
    if (!keyHash) return address;
    const knownKeyId = this.liveKeyIds.get(keyHash);
    if (knownKeyId && isBlocked(`key:${knownKeyId}`)) return `key:${knownKeyId}`;
    let caller: Caller | null;
    try {
      caller = await this.apiKeys.liveKeyOf(request);
    } catch {
      // The database unreachable: counted against the address; ApiKeyGuard then answers that
      // failure (503), with this guard's RateLimit-* headers like any answer.
      return address;
    }
    this.rememberLookUp(keyHash, caller);
    return caller ? `key:${caller.keyId}` : address;
  }

  private rememberLookUp(keyHash: string, caller: Caller | null): void {
    this.liveKeyIds.delete(keyHash);
    if (!caller) return;
    this.liveKeyIds.set(keyHash, caller.keyId);
    if (this.liveKeyIds.size > REMEMBERED_LIVE_KEYS) this.liveKeyIds.delete(this.liveKeyIds.keys().next().value!);
  }

  /** The library sets only Retry-After on a 429; the RateLimit-* headers belong on every answer. */
  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const response = context.switchToHttp().getResponse<Response>();
    response.setHeader(`${this.headerPrefix}-Limit`, detail.limit);
    response.setHeader(`${this.headerPrefix}-Remaining`, 0);
    response.setHeader(`${this.headerPrefix}-Reset`, detail.timeToBlockExpire);
    throw rateLimited(detail.tracker.startsWith('key:') ? 'key' : 'address');
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `rate-limit:${throttlerName}:${tracker}`;
  }
}

/** The 429 of a counter: a live key's own, or a client address's (src/openapi.ts shows both). */
export function rateLimited(counter: 'key' | 'address'): Problem {
  const who = counter === 'key' ? 'for this key' : 'from this address';
  return new Problem(HttpStatus.TOO_MANY_REQUESTS, 'rate_limited', `Too many requests ${who}; retry after the number of seconds in Retry-After`);
}
