import type { OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * The rate limit's counters, and a look without counting: whether a counter is blocked now, so
 * that RateLimitGuard answers 429 before a key's look-up costs a database query. At once and O(1).
 */
export interface RateLimitStorage extends ThrottlerStorage {
  isBlocked(key: string, throttlerName: string): boolean;
}

interface Counter {
  hits: number;
  /** When the window the hits count in ends (ms since the epoch). */
  windowEndsAt: number;
  /** When a key that went over the limit may send again; 0 while it is not blocked. */
  blockedUntil: number;
}

/**
 * The rate limit's counters in memory without REDIS_URL: a fixed window per key, the Redis store's
 * rule, O(1) per request. Not @nestjs/throttler's own store, which keeps a timestamp per request
 * and filters them all each time (docs/performance.md, Measured choices).
 */
export class FixedWindowRateLimitStorage implements RateLimitStorage, OnApplicationShutdown {
  private readonly counters = new Map<string, Counter>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly now: () => number = Date.now,
    sweepEveryMs = 60_000,
  ) {
    // Keys that stopped sending are dropped once their window and block are over.
    this.sweep = setInterval(() => this.forgetIdle(), sweepEveryMs).unref();
  }

  // The interface is asynchronous for stores like Redis; this one answers at once.
  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const now = this.now();
    const id = counterId(key, throttlerName);
    let counter = this.counters.get(id);
    if (!counter || (counter.blockedUntil !== 0 && counter.blockedUntil <= now)) {
      // The key's first request, or its first since its block ended: it starts again.
      counter = { hits: 0, windowEndsAt: now + ttl, blockedUntil: 0 };
      this.counters.set(id, counter);
    } else if (counter.windowEndsAt <= now) {
      // A new window; a block outlasts it (blockDuration may be longer than the window).
      counter.hits = 0;
      counter.windowEndsAt = now + ttl;
    }
    counter.hits++;
    if (counter.blockedUntil === 0 && counter.hits > limit) counter.blockedUntil = now + blockDuration;
    const blocked = counter.blockedUntil !== 0;
    return {
      totalHits: counter.hits,
      timeToExpire: Math.ceil((counter.windowEndsAt - now) / 1000),
      isBlocked: blocked,
      timeToBlockExpire: blocked ? Math.ceil((counter.blockedUntil - now) / 1000) : 0,
    };
  }

  isBlocked(key: string, throttlerName: string): boolean {
    return (this.counters.get(counterId(key, throttlerName))?.blockedUntil ?? 0) > this.now();
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweep);
  }

  private forgetIdle(): void {
    const now = this.now();
    for (const [id, counter] of this.counters) {
      if (counter.windowEndsAt <= now && counter.blockedUntil <= now) this.counters.delete(id);
    }
  }
}

/** Blocks remembered per instance by RedisRateLimitStorage: past this, the one remembered first is forgotten. */
const REMEMBERED_BLOCKS = 10_000;

/**
 * The counters in Redis (REDIS_URL; shared by every instance), with isBlocked() answered from the
 * blocks this instance's own increments were told of, kept until they end: no Redis round trip
 * on every request for it. A block that another instance started costs this one a key look-up,
 * once, before its own increment learns of it.
 */
export class RedisRateLimitStorage extends ThrottlerStorageRedisService implements RateLimitStorage {
  /** Counter to when its block ends (ms since the epoch), oldest first out. */
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    redisUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    super(redisUrl);
  }

  override async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const record = await super.increment(key, ttl, limit, blockDuration, throttlerName);
    if (record.isBlocked && !this.isBlocked(key, throttlerName)) {
      // Redis answers whole seconds, rounded up: a second less, so that it never outlasts the block.
      this.blockedUntil.set(counterId(key, throttlerName), this.now() + (record.timeToBlockExpire - 1) * 1000);
      if (this.blockedUntil.size > REMEMBERED_BLOCKS) this.blockedUntil.delete(this.blockedUntil.keys().next().value!);
    }
    return record;
  }

  isBlocked(key: string, throttlerName: string): boolean {
    const id = counterId(key, throttlerName);
    const until = this.blockedUntil.get(id);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.blockedUntil.delete(id);
    return false;
  }
}

function counterId(key: string, throttlerName: string): string {
  return `${throttlerName}\u0000${key}`;
}
