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

  it('serves a valid key from an address blocked for guessing, on its own budget: 110 invalid tokens, then a key never used before is 200; invalid ones still meet 429', async () => {
    const fresh = await project.issueKey([], 'Fresh');
    const agent = from('127.0.0.3');
    const statuses: number[] = [];
    for (let i = 0; i < 110; i++) statuses.push((await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`)).status);
    expect(statuses).toEqual([...Array(LIMIT).fill(401), ...Array(110 - LIMIT).fill(429)]);
    const res = await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${fresh.secret}`).expect(200);
    expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
    // The key's requests do not count against the address, nor lift its block.
    expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`));
    expectLimited(await t.http.get('/api/v1/tasks').agent(agent));
    await t.http.get('/api/v1/members').agent(agent).set('Authorization', `Bearer ${project.key}`).expect(200);
    // Other addresses are not limited by this one's guesses.
    await t.http.get('/api/v1/tasks').agent(from('127.0.0.4')).set('Authorization', `Bearer ${guess()}`).expect(401);
  });

  it('answers 429 to a blocked address looking up only tokens it has not seen: one sent again, or one not shaped like a key, costs no query', async () => {
    const agent = from('127.0.0.8');
    const guesses = Array.from({ length: LIMIT }, guess);
    for (const key of guesses) await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${key}`).expect(401);
    expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guesses[0]}`));
    const seen = async () => {
      for (const key of [...guesses.slice(0, 5), 'not-a-key', `tsk_${'x'.repeat(10)}`]) {
        expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${key}`));
      }
      expectLimited(await t.http.get('/api/v1/tasks').agent(agent));
    };
    expect(await keyLookupsDuring(t, seen)).toBe(0);
    // A token not seen yet may be a live key: one look-up by hash, then it is known.
    const fresh = guess();
    const once = async () => expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${fresh}`));
    expect(await keyLookupsDuring(t, once)).toBe(1);
    expect(await keyLookupsDuring(t, once)).toBe(0);
    // The revoked key, once looked up, is known too.
    expect(
      await keyLookupsDuring(
        t,
        async () => void (await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${revokedKey}`).expect(429)),
      ),
    ).toBeLessThanOrEqual(1);
    expect(
      await keyLookupsDuring(
        t,
        async () => void (await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${revokedKey}`).expect(429)),
      ),
    ).toBe(0);
    // A key in use from there is looked up, and answered on its own counter.
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
  it('blocks an address on every instance for requests without a valid key, and serves a valid key from it on every instance', async () => {
    const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
    const first = await startTestApp({ rateLimitPerMinute: 3, redisUrl });
    const second = await startTestApp({ rateLimitPerMinute: 3, redisUrl });
    const agents = [fromRandomAddress(), fromRandomAddress(), fromRandomAddress()];
    const [agent] = agents;
    const send = (t: TestApp, key = guess()) => t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${key}`);
    /** A key of a new project of `t`, issued from an address of its own (two admin requests: under the limit of 3). */
    const keyOf = async (t: TestApp, admin: Agent) => {
      const as = (path: string, body: object) => t.http.post(path).agent(admin).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send(body);
      const { id } = (await as('/admin/v1/projects', { name: 'Redis' }).expect(201)).body.project;
      return (await as(`/admin/v1/projects/${id}/keys`, { name: 'Fresh', permissions: [] }).expect(201)).body.secret as string;
    };
    try {
      const keys = [await keyOf(first, agents[1]), await keyOf(second, agents[2])];
      for (let i = 0; i < 3; i++) await send(first).expect(401);
      await send(first).expect(429);
      // Counted in Redis: the other instance's first guess from there is over the limit too.
      await send(second).expect(429);
      const repeated = guess();
      await send(second, repeated).expect(429);
      expect(await keyLookupsDuring(second, async () => void (await send(second, repeated).expect(429)))).toBe(0);
      await send(first, keys[0]).expect(200);
      await send(second, keys[1]).expect(200);
    } finally {
      for (const each of agents) each.destroy();
      await first.close();
      await second.close();
    }
  });
});
