import { createProject, fromRandomAddress, useProject } from './support/fixtures';
import { ADMIN_TOKEN, startTestApp, useTestApp } from './support/test-app';

describe('HTTP conventions: problem+json, strict input, body limits', () => {
  const t = useTestApp();
  const project = useProject(t);

  const admin = () => ({ Authorization: `Bearer ${ADMIN_TOKEN}` });

  it('answers errors as RFC 9457 problem+json with a stable code and no internals', async () => {
    const res = await project.api.get('/api/v1/nothing-here').expect(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: expect.any(String),
      code: 'not_found',
    });
  });

  it('rejects an unknown body field with 400 unknown_field, naming it, and creates nothing', async () => {
    const before = await t.prisma.project.count();
    const res = await t.http.post('/admin/v1/projects').set(admin()).send({ name: 'X', owner: 'me' }).expect(400);
    expect(res.body).toMatchObject({ status: 400, code: 'unknown_field', errors: [{ field: 'owner', message: expect.any(String) }] });
    expect(await t.prisma.project.count()).toBe(before);
  });

  it('rejects an unknown query parameter with 400 unknown_field', async () => {
    const res = await project.api.get('/api/v1/members?sort=name').expect(400);
    expect(res.body).toMatchObject({ code: 'unknown_field', errors: [{ field: 'sort' }] });
  });

  it('rejects a body on a route that takes none with 400 unknown_field', async () => {
    const key = await project.issueKey([], 'To revoke');
    const res = await t.http.delete(`/admin/v1/keys/${key.id}`).set(admin()).send({ reason: 'x' }).expect(400);
    expect(res.body.code).toBe('unknown_field');
    await key.api.get('/api/v1/members').expect(200);
  });

  it('answers a wrong value with 400 validation_failed listing each field', async () => {
    const res = await t.http.post('/admin/v1/projects').set(admin()).send({ name: 42 }).expect(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ field: 'name' })] });
    expect(res.body.detail).toContain('name');
  });

  it('answers malformed JSON with 400 malformed_json', async () => {
    const res = await t.http.post('/admin/v1/projects').set(admin()).set('Content-Type', 'application/json').send('{"name": ').expect(400);
    expect(res.body.code).toBe('malformed_json');
    expect(res.body.detail).not.toMatch(/Unexpected|position|SyntaxError/);
  });

  it('answers a JSON body that is not an object with 400 malformed_json', async () => {
    for (const body of ['["a"]', '"text"', '42', 'null']) {
      const res = await t.http.post('/admin/v1/projects').set(admin()).set('Content-Type', 'application/json').send(body);
      expect([res.status, res.body.code]).toEqual([400, 'malformed_json']);
    }
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const res = await t.http
      .post('/admin/v1/projects')
      .set(admin())
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ name: 'x'.repeat(1024 * 1024) }))
      .expect(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('accepts a body of just under 1 MiB (then validates it)', async () => {
    const res = await t.http
      .post('/admin/v1/projects')
      .set(admin())
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 20) }));
    expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
  });

  it('answers a body that is not JSON with 415 unsupported_media_type', async () => {
    const res = await t.http.post('/admin/v1/projects').set(admin()).set('Content-Type', 'text/plain').send('name=x').expect(415);
    expect(res.body.code).toBe('unsupported_media_type');
    const form = await t.http.post('/admin/v1/projects').set(admin()).type('form').send({ name: 'x' }).expect(415);
    expect(form.body.code).toBe('unsupported_media_type');
  });

  it('accepts application/json with a charset', async () => {
    await t.http.post('/admin/v1/projects').set(admin()).set('Content-Type', 'application/json; charset=utf-8').send('{"name":"ok"}').expect(201);
  });

  it('checks the key before the body: a malformed body without a key is 401', async () => {
    const res = await t.http.post('/admin/v1/projects').set('Content-Type', 'application/json').send('{"name": ').expect(401);
    expect(res.body.code).toBe('unauthenticated');
  });

  it('answers a path that no endpoint serves 404 not_found and a method a path does not serve 405, before the key check', async () => {
    const task = (await project.api.post('/api/v1/tasks', { title: 'Here' }).expect(201)).body.task;
    for (const [res, status, code] of [
      [await project.api.get('/api/v1/no-such-endpoint?x=1'), 404, 'not_found'],
      [await project.api.post('/api/v1/tasks/whatever/else', { a: 1 }), 404, 'not_found'],
      [await project.api.patch('/api/v1/sprints', { name: 'x' }), 405, 'method_not_allowed'],
      [await t.http.put(`/api/v1/tasks/${task.id}`).set('Authorization', `Bearer ${project.key}`).send({ title: 'x' }), 405, 'method_not_allowed'],
    ] as const) {
      expect([res.status, res.body.code]).toEqual([status, code]);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect((await t.http.get('/api/v1/no-such-endpoint')).status).toBe(404);
    expect((await t.http.put(`/api/v1/tasks/${task.id}`)).status).toBe(405);
    expect((await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task.title).toBe('Here');
  });

  it('echoes the request id in X-Request-Id', async () => {
    const given = await project.api.get('/api/v1/members').set('X-Request-Id', 'trace-123').expect(200);
    expect(given.headers['x-request-id']).toBe('trace-123');
    const made = await project.api.get('/api/v1/members').expect(200);
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends RateLimit-Limit, -Remaining and -Reset on every /api/v1 answer, errors included', async () => {
    for (const res of [
      await project.api.get('/api/v1/members'),
      await t.http.get('/api/v1/members'),
      await project.api.get('/api/v1/labels?x=1'),
      await project.api.get('/api/v1/no-such-endpoint'),
    ]) {
      expect(Number(res.headers['ratelimit-limit'])).toBe(t.config.rateLimitPerMinute);
      expect(res.headers['ratelimit-remaining']).toMatch(/^\d+$/);
      expect(res.headers['ratelimit-reset']).toMatch(/^\d+$/);
    }
  });
});

describe('rate limit per key', () => {
  // The admin interface is limited per client address (decisions.md section 21): this test's
  // project is set up through it (8 requests), under the limit.
  const LIMIT = 10;
  const t = useTestApp({ rateLimitPerMinute: LIMIT });

  it('counts each key apart and answers 429 rate_limited with Retry-After past the limit', async () => {
    const project = await createProject(t);
    const other = await project.issueKey([], 'Other key');
    const remaining = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await project.api.get('/api/v1/members').expect(200);
      remaining.push(res.headers['ratelimit-remaining']);
    }
    expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => String(LIMIT - 1 - i)));
    const limited = await project.api.get('/api/v1/members').expect(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-limit']).toBe(String(LIMIT));
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(Number(limited.headers['ratelimit-reset'])).toBeGreaterThan(0);
    await other.api.get('/api/v1/members').expect(200);
  });
});

describe('rate limit shared through Redis (REDIS_URL)', () => {
  it('counts a client across instances that share the Redis store', async () => {
    const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
    const first = await startTestApp({ rateLimitPerMinute: 3, redisUrl });
    const second = await startTestApp({ rateLimitPerMinute: 3, redisUrl });
    // Requests without a key count against their address: one of this run's own.
    const client = fromRandomAddress();
    try {
      for (const expected of ['2', '1']) {
        expect((await first.http.get('/api/v1/members').agent(client).expect(401)).headers['ratelimit-remaining']).toBe(expected);
      }
      const other = await second.http.get('/api/v1/members').agent(client).expect(401);
      expect(other.headers['ratelimit-remaining']).toBe('0');
      const limited = await first.http.get('/api/v1/members').agent(client).expect(429);
      expect(limited.body.code).toBe('rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['ratelimit-limit']).toBe('3');
      expect(limited.headers['ratelimit-remaining']).toBe('0');
      expect(Number(limited.headers['ratelimit-reset'])).toBeGreaterThan(0);
    } finally {
      client.destroy();
      await first.close();
      await second.close();
    }
  });
});
