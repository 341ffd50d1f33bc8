import { randomBytes } from 'node:crypto';
import type { Agent } from 'node:http';
import type { Response } from 'supertest';
import { createProject, fromAddress, fromRandomAddress, TestProject } from './support/fixtures';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

/** Counts the look-ups of keys in `t`'s database while `work` runs. */
async function keyLookupsDuring(t: TestApp, work: () => Promise<void>): Promise<number> {
  let lookups = 0;
  const stop = t.prisma.onStatement((statement) => {
    if (/\bapi_keys\b/.test(statement)) lookups++;
  });
  try {
    await work();
  } finally {
    stop();
  }
  return lookups;
}

const guess = () => `tsk_${randomBytes(32).toString('base64url')}`;

// decisions.md section 21: requests with an unknown or revoked key, and every request to the
// admin interface, count against their client address (RATE_LIMIT_PER_MINUTE), so that guessing
// a key or the admin token is throttled; a live key keeps a counter of its own.
describe('guessing is throttled per client address', () => {
  // Setting up the project through the admin interface takes 9 requests from 127.0.0.1.
  const LIMIT = 12;
  let t: TestApp;
  let project: TestProject;
  let revokedKey: string;
  const agents: Agent[] = [];
  const from = (address: string) => {
    const agent = fromAddress(address);
    agents.push(agent);
    return agent;
  };

  beforeAll(async () => {
    t = await startTestApp({ rateLimitPerMinute: LIMIT });
    project = await createProject(t);
    const revoked = await project.issueKey([], 'Revoked');
    await t.http.delete(`/admin/v1/keys/${revoked.id}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(204);
    revokedKey = revoked.secret;
  });
  afterAll(async () => {
    for (const agent of agents) agent.destroy();
    await t.close();
  });

  function expectLimited(res: Response): void {
    expect(res.status).toBe(429);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['ratelimit-limit']).toBe(String(LIMIT));
    expect(res.headers['ratelimit-remaining']).toBe('0');
  }

  it('counts requests with unknown keys against their address and answers 429 rate_limited past the limit', async () => {
    const agent = from('127.0.0.2');
    const remaining = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`).expect(401);
      remaining.push(Number(res.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
    expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`));
    // The rate limit comes before authentication: no key at all is limited there too.
    expectLimited(await t.http.get('/api/v1/tasks').agent(agent));
  });

  it('keeps a counter of its own for a live key in use, sent from an address that guessed too much', async () => {
    // In use: recently looked up as live (RateLimitGuard); a key not seen yet waits for the address's block.
    await t.http.get('/api/v1/tasks').set('Authorization', `Bearer ${project.key}`).expect(200);
    const agent = from('127.0.0.3');
    for (let i = 0; i < LIMIT; i++) await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`).expect(401);
    expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`));
    const res = await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${project.key}`).expect(200);
    expect(Number(res.headers['ratelimit-remaining'])).toBeGreaterThan(0);
    // Other addresses are not limited by this one's guesses.
    await t.http.get('/api/v1/tasks').agent(from('127.0.0.4')).set('Authorization', `Bearer ${guess()}`).expect(401);
  });

  it('answers 429 to an address over its limit without looking its keys up in the database', async () => {
    const agent = from('127.0.0.8');
    for (let i = 0; i < LIMIT; i++) await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`).expect(401);
    // The request that goes over the limit starts the block (and was looked up); the next ones are not.
    expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`));
    const lookups = await keyLookupsDuring(t, async () => {
      for (const key of [guess(), revokedKey, guess()]) {
        expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${key}`));
      }
    });
    expect(lookups).toBe(0);
    // A key in use from there is still looked up, and answered on its own counter.
    await t.http.get('/api/v1/members').set('Authorization', `Bearer ${project.key}`).expect(200);
    const inUse = async () => void (await t.http.get('/api/v1/members').agent(agent).set('Authorization', `Bearer ${project.key}`).expect(200));
    expect(await keyLookupsDuring(t, inUse)).toBe(1);
  });

  it('answers 429 to a live key over its limit without looking it up in the database', async () => {
    const busy = await project.issueKey([], 'Busy');
    for (let i = 0; i < LIMIT; i++) await busy.api.get('/api/v1/members').expect(200);
    expectLimited(await busy.api.get('/api/v1/members'));
    const lookups = await keyLookupsDuring(t, async () => {
      for (let i = 0; i < 3; i++) expectLimited(await busy.api.get('/api/v1/members'));
    });
    expect(lookups).toBe(0);
  });

  it('counts a revoked key against its address, together with unknown ones', async () => {
    const agent = from('127.0.0.5');
    for (let i = 0; i < LIMIT; i++) {
      const key = i % 2 ? revokedKey : guess();
      await t.http.get('/api/v1/members').agent(agent).set('Authorization', `Bearer ${key}`).expect(401);
    }
    expectLimited(await t.http.get('/api/v1/members').agent(agent).set('Authorization', `Bearer ${revokedKey}`));
  });

  it('counts every admin request against its address, whether or not its token is right, and creates nothing past the limit', async () => {
    const agent = from('127.0.0.6');
    for (let i = 0; i < LIMIT; i++) {
      const token = i % 2 ? ADMIN_TOKEN : guess();
      // A right token with an invalid body (400) counts like a wrong token (401).
      const res = await t.http.post('/admin/v1/projects').agent(agent).set('Authorization', `Bearer ${token}`).send({});
      expect(res.status).toBe(i % 2 ? 400 : 401);
      expect(Number(res.headers['ratelimit-remaining'])).toBe(LIMIT - 1 - i);
    }
    const projects = await t.prisma.project.count();
    expectLimited(await t.http.post('/admin/v1/projects').agent(agent).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send({ name: 'Too many' }));
    expectLimited(await t.http.post('/admin/v1/projects').agent(agent).set('Authorization', `Bearer ${guess()}`).send({ name: 'Too many' }));
    expect(await t.prisma.project.count()).toBe(projects);
  });

  it('counts the admin interface apart from /api/v1 requests without a key from the same address', async () => {
    const agent = from('127.0.0.7');
    for (let i = 0; i < LIMIT; i++) await t.http.post('/admin/v1/projects').agent(agent).send({}).expect(401);
    expectLimited(await t.http.post('/admin/v1/projects').agent(agent).send({}));
    const res = await t.http.get('/api/v1/tasks').agent(agent).expect(401);
    expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
  });
});

describe('guessing throttled with the counters in Redis (REDIS_URL)', () => {
  it('answers 429 to a blocked address without a key look-up, once each instance has seen the block', async () => {
    const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
    const first = await startTestApp({ rateLimitPerMinute: 3, redisUrl });
    const second = await startTestApp({ rateLimitPerMinute: 3, redisUrl });
    const agent = fromRandomAddress();
    const send = (t: TestApp) => t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`);
    try {
      for (let i = 0; i < 3; i++) await send(first).expect(401);
      await send(first).expect(429);
      expect(await keyLookupsDuring(first, async () => void (await send(first).expect(429)))).toBe(0);
      // The other instance learns of the block from its own first 429, then looks nothing up either.
      expect(await keyLookupsDuring(second, async () => void (await send(second).expect(429)))).toBe(1);
      expect(await keyLookupsDuring(second, async () => void (await send(second).expect(429)))).toBe(0);
    } finally {
      agent.destroy();
      await first.close();
      await second.close();
    }
  });
});
