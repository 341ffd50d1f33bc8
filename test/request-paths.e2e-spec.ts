import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fromAddress, useProject } from './support/fixtures';
import { ADMIN_TOKEN, useTestApp } from './support/test-app';

/** Sends `request` as raw bytes and reads the answer's status line and headers (the server closes: Connection: close). */
function exchange(port: number, request: string): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [statusLine, ...headerLines] = text.split('\r\n\r\n')[0].split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers });
    });
  });
}

// A path is matched as it is spelled: /api/v1 and /admin/v1 are the only spellings of the API and
// the admin interface, so that every rule that tells them apart (rate limit, Cache-Control,
// Idempotency-Key, If-Match: src/common/http/surface.ts) sees the request the router serves.
describe('paths as they are spelled', () => {
  const LIMIT = 20;
  const t = useTestApp({ rateLimitPerMinute: LIMIT });
  const project = useProject(t);
  let port: number;
  beforeAll(async () => {
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });

  it('answers /API/v1 and /ADMIN/v1 (any other case) 404 not_found as problem+json, reaching no endpoint', async () => {
    const before = await t.prisma.task.count();
    for (const res of [
      await t.http.get('/API/v1/tasks').set('Authorization', `Bearer ${project.key}`),
      await t.http.get('/api/V1/members').set('Authorization', `Bearer ${project.key}`),
      await t.http.post('/Api/v1/tasks').set('Authorization', `Bearer ${project.key}`).set('Idempotency-Key', 'retry-1').send({ title: 'Once' }),
      await t.http.post('/Api/v1/tasks').set('Authorization', `Bearer ${project.key}`).set('Idempotency-Key', 'retry-1').send({ title: 'Once' }),
      await t.http.get('/ADMIN/v1/projects').set('Authorization', `Bearer ${ADMIN_TOKEN}`),
      await t.http.get('/Admin/v1/projects').set('Authorization', `Bearer ${ADMIN_TOKEN}`),
    ]) {
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await t.prisma.task.count()).toBe(before);
  });

  it('never compares an admin token sent to /ADMIN/v1, however many are sent: no guessing there', async () => {
    const agent = fromAddress('127.0.0.9');
    try {
      for (let i = 0; i <= LIMIT; i++) {
        const token = i % 2 ? ADMIN_TOKEN : `wrong-${i}`;
        const res = await t.http.post('/ADMIN/v1/projects').agent(agent).set('Authorization', `Bearer ${token}`).send({ name: 'Guess' });
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
      // The address was not counted by those: its admin counter is whole.
      const res = await t.http.get('/admin/v1/projects').agent(agent).set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
    } finally {
      agent.destroy();
    }
  });

  /** The answer went through the rate limit, as every /api/v1 and /admin/v1 answer does. */
  function expectCounted(res: { headers: Record<string, string> }): void {
    expect(res.headers['ratelimit-limit']).toBe(String(LIMIT));
    expect(res.headers['ratelimit-remaining']).toMatch(/^\d+$/);
  }

  it('answers a path that is not UTF-8 after the rate limit and the key check: an id that is not one is 404', async () => {
    for (const path of ['/api/v1/tasks/%FF', '/api/v1/tasks/%E2%82', '/api/v1/sprints/%', '/api/v1/tasks/%zz/history']) {
      const anonymous = await t.http.get(path);
      expect([anonymous.status, anonymous.body.code]).toEqual([401, 'unauthenticated']);
      expectCounted(anonymous);
      const res = await t.http.get(path).set('Authorization', `Bearer ${project.key}`);
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'not_found']);
      expectCounted(res);
    }
    // The body is validated first, as for any id (decisions.md section 1: 400 before 404).
    const patched = await project.api.patch('/api/v1/tasks/%FF', { title: 42 });
    expect([patched.status, patched.body.code]).toEqual([400, 'validation_failed']);
    await project.api.patch('/api/v1/tasks/%FF', { title: 'x' }).expect(404);
    // A segment no endpoint has: the API's own 404.
    const unknown = await project.api.get('/api/v1/%FF');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
    expectCounted(unknown);
    // The admin interface alike: its token checked (and counted) first.
    const admin = await t.http.get('/admin/v1/projects/%FF/keys');
    expect([admin.status, admin.body.code]).toEqual([401, 'unauthenticated']);
    expectCounted(admin);
    await t.http.get('/admin/v1/projects/%FF/keys').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(404);
  });

  it('answers /api/v1 itself like any path no endpoint serves: 404 with or without a key, rate-limited', async () => {
    for (const path of ['/api/v1', '/api/v1/']) {
      const anonymous = await t.http.get(path);
      expect([anonymous.status, anonymous.body.code]).toEqual([404, 'not_found']);
      expectCounted(anonymous);
      const res = await t.http.post(path).set('Authorization', `Bearer ${project.key}`).send({});
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      expectCounted(res);
    }
  });

  it('treats a request target in absolute form like its path: rate limit and Cache-Control', async () => {
    const answer = await exchange(
      port,
      `GET http://localhost/api/v1/members HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${project.key}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('private, no-cache');
    expect(answer.headers['ratelimit-limit']).toBe(String(LIMIT));
  });
});
