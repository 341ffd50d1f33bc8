import { randomBytes } from 'node:crypto';
import type { Agent } from 'node:http';
import type { Response } from 'supertest';
import { createProject, fromAddress, TestProject } from './support/fixtures';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

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
  const guess = () => `tsk_${randomBytes(32).toString('base64url')}`;

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

  it('keeps a counter of its own for a live key sent from an address that guessed too much', async () => {
    const agent = from('127.0.0.3');
    for (let i = 0; i < LIMIT; i++) await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`).expect(401);
    expectLimited(await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${guess()}`));
    const res = await t.http.get('/api/v1/tasks').agent(agent).set('Authorization', `Bearer ${project.key}`).expect(200);
    expect(Number(res.headers['ratelimit-remaining'])).toBeGreaterThan(0);
    // Other addresses are not limited by this one's guesses.
    await t.http.get('/api/v1/tasks').agent(from('127.0.0.4')).set('Authorization', `Bearer ${guess()}`).expect(401);
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
