import { FixedWindowRateLimitStorage } from '../src/auth/rate-limit.storage';

// The in-memory store's rule, on a clock the test moves: the HTTP side (headers, 429,
// Retry-After) is covered in http-conventions.e2e-spec.ts, where a minute cannot pass.
describe('rate limit counters in memory (fixed window, as in Redis)', () => {
  const MINUTE = 60_000;
  let now: number;
  let storage: FixedWindowRateLimitStorage;
  const hit = (key = 'key:a') => storage.increment(key, MINUTE, 3, MINUTE, 'default');

  beforeEach(() => {
    now = Date.UTC(2026, 10, 23, 12, 0, 0);
    storage = new FixedWindowRateLimitStorage(() => now);
  });
  afterEach(() => storage.onApplicationShutdown());

  it('counts a key within its window and blocks it past the limit until the block ends', async () => {
    expect(await hit()).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
    now += 20_000;
    expect((await hit()).totalHits).toBe(2);
    expect((await hit()).timeToExpire).toBe(40);
    now += 1_000;
    expect(await hit()).toEqual({ totalHits: 4, timeToExpire: 39, isBlocked: true, timeToBlockExpire: 60 });
    // The window ends before the block does: still blocked.
    now += 45_000;
    expect(await hit()).toMatchObject({ isBlocked: true, timeToBlockExpire: 15 });
    now += 15_000;
    expect(await hit()).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
  });

  it('tells, without counting, whether a key is blocked, until its block ends', async () => {
    for (let i = 0; i < 3; i++) await hit();
    expect(storage.isBlocked('key:a', 'default')).toBe(false);
    await hit();
    expect(storage.isBlocked('key:a', 'default')).toBe(true);
    expect(storage.isBlocked('key:b', 'default')).toBe(false);
    now += MINUTE - 1;
    expect(storage.isBlocked('key:a', 'default')).toBe(true);
    now += 1;
    expect(storage.isBlocked('key:a', 'default')).toBe(false);
  });

  it('starts a new window when the last one ended, and counts each key apart', async () => {
    await hit();
    await hit();
    expect((await hit('key:b')).totalHits).toBe(1);
    now += MINUTE;
    expect(await hit()).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
  });
});
