import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';

/** A stream's slot among its key's: what release and renew name. */
export interface Slot {
  keyId: string;
  id: string;
}

/**
 * The open streams of each key, counted against STREAMS_PER_KEY (decisions.md section 20): in
 * this process (InstanceStreamSlots), or across instances in Redis when REDIS_URL is set, as the
 * rate limit counts (RedisStreamSlots).
 */
export interface StreamSlots {
  /** A slot of the key, or null when it holds `limit` already. */
  take(keyId: string, limit: number): Promise<Slot | null>;
  release(slot: Slot): void;
  /** Called every keep-alive interval with the slots of the streams still open. */
  renew(slots: Slot[]): void;
  close(): Promise<void>;
}

/** Counted in this process: behind N instances a key may hold `limit` streams on each. */
export class InstanceStreamSlots implements StreamSlots {
  private readonly openByKey = new Map<string, number>();

  async take(keyId: string, limit: number): Promise<Slot | null> {
    const open = this.openByKey.get(keyId) ?? 0;
    if (open >= limit) return null;
    this.openByKey.set(keyId, open + 1);
    return { keyId, id: '' };
  }

  release(slot: Slot): void {
    const open = (this.openByKey.get(slot.keyId) ?? 1) - 1;
    if (open > 0) this.openByKey.set(slot.keyId, open);
    else this.openByKey.delete(slot.keyId);
  }

  renew(): void {}

  async close(): Promise<void> {}
}

/**
 * Takes a free slot: drops the leases that expired (their instance died without releasing
 * them), then adds one if fewer than the limit remain. KEYS[1]: the key's sorted set of leases
 * (score: when each expires); ARGV: now, the new lease's expiry, its id, the limit, the set's lifetime.
 */
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

/**
 * Slots in Redis, shared by every instance: each open stream holds a lease that its instance
 * renews every keep-alive interval; a lease not renewed for LEASE_INTERVALS intervals (its
 * instance died) no longer counts. When Redis cannot be reached the stream is let through,
 * uncounted: the limit is a guard, and streams must not depend on Redis being up.
 */
export class RedisStreamSlots implements StreamSlots {
  private static readonly LEASE_INTERVALS = 3;
  private readonly logger = new Logger(RedisStreamSlots.name);
  private readonly redis: Redis;
  private readonly leaseMs: number;

  constructor(redisUrl: string, renewEveryMs: number) {
    // commandTimeout: an unreachable Redis that drops packets must not hold a stream's opening for seconds.
    this.redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 500 });
    this.redis.on('error', () => undefined);
    this.leaseMs = renewEveryMs * RedisStreamSlots.LEASE_INTERVALS;
  }

  async take(keyId: string, limit: number): Promise<Slot | null> {
    const slot = { keyId, id: randomUUID() };
    const now = Date.now();
    try {
      const taken = await this.redis.eval(TAKE, 1, setOf(keyId), now, now + this.leaseMs, slot.id, limit, this.leaseMs);
      return taken === 1 ? slot : null;
    } catch (error) {
      this.logger.warn(`Could not count the key's streams in Redis; this one is let through: ${(error as Error).message}`);
      return slot;
    }
  }

  release(slot: Slot): void {
    this.redis.zrem(setOf(slot.keyId), slot.id).catch(() => undefined);
  }

  renew(slots: Slot[]): void {
    if (slots.length === 0) return;
    const expiresAt = Date.now() + this.leaseMs;
    const batch = this.redis.pipeline();
    for (const slot of slots) batch.zadd(setOf(slot.keyId), 'XX', expiresAt, slot.id).pexpire(setOf(slot.keyId), this.leaseMs);
    batch.exec().catch((error: Error) => this.logger.warn(`Could not renew the streams' leases in Redis: ${error.message}`));
  }

  /** After the streams ended: their releases are sent before the connection closes. */
  async close(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => undefined);
    else this.redis.disconnect();
  }
}

/** The Redis key of a key's leases. */
export function setOf(keyId: string): string {
  return `event-streams:${keyId}`;
}
