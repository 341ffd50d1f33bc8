import { Logger } from '@nestjs/common';
import { SprintsService } from '../src/sprints/sprints.service';
import { asAdmin, createTask, ISO_TIMESTAMP, useProject } from './support/fixtures';
import { ADMIN_TOKEN, useTestApp } from './support/test-app';

/** What the service writes, line by line (a pino destination). */
class CapturedLog {
  raw = '';
  lines: Record<string, unknown>[] = [];
  write(chunk: string): void {
    this.raw += chunk;
    for (const line of chunk.split('\n')) if (line) this.lines.push(JSON.parse(line) as Record<string, unknown>);
  }
  of(requestId: string): Record<string, unknown>[] {
    return this.lines.filter((line) => line.requestId === requestId);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('logs and request ids', () => {
  // One app for the whole file: lines written outside a request go to the first logger
  // nestjs-pino saw in this module registry, which must be the one writing to `log`.
  const log = new CapturedLog();
  const t = useTestApp({ logLevel: 'debug' }, { logDestination: log });
  const project = useProject(t);
  let keyId: string;
  beforeAll(async () => {
    keyId = (await t.prisma.apiKey.findFirstOrThrow({ where: { projectId: project.id } })).id;
  });

  it('writes one JSON line per request: time, level, request id, method, route template, status, duration, key and project', async () => {
    const created = await project.api.post('/api/v1/tasks', { title: 'Logged' }).set('X-Request-Id', 'create-1').expect(201);
    const taskId = created.body.task.id as string;
    await project.api.get(`/api/v1/tasks/${taskId}`).set('X-Request-Id', 'read-1').expect(200);

    expect(log.of('create-1')).toEqual([
      {
        level: 'info',
        time: expect.stringMatching(ISO_TIMESTAMP),
        pid: process.pid,
        hostname: expect.any(String),
        requestId: 'create-1',
        method: 'POST',
        route: '/api/v1/tasks',
        path: '/api/v1/tasks',
        status: 201,
        durationMs: expect.any(Number),
        keyId,
        projectId: project.id,
        msg: 'POST /api/v1/tasks 201',
      },
    ]);
    expect(log.of('read-1')).toEqual([
      expect.objectContaining({ route: '/api/v1/tasks/:taskId', path: `/api/v1/tasks/${taskId}`, status: 200, keyId, projectId: project.id }),
    ]);
    expect(log.of('read-1')[0].durationMs).toBeGreaterThan(0);
  });

  it('writes the request line of an unauthenticated request without key or project', async () => {
    await t.http.get('/api/v1/tasks').set('Authorization', 'Bearer tsk_not-a-real-key-0000000000').set('X-Request-Id', 'anonymous-1').expect(401);
    const [line] = log.of('anonymous-1');
    expect(line).toMatchObject({ level: 'info', status: 401, route: '/api/v1/tasks' });
    expect(line).not.toHaveProperty('keyId');
    expect(line).not.toHaveProperty('projectId');
  });

  it('never writes the Authorization header, a key, a key secret answered by the admin interface or the admin token', async () => {
    const issued = await asAdmin(t).post(`/admin/v1/projects/${project.id}/keys`, { name: 'Secret keeper', permissions: [] }).expect(201);
    await withKeyHeader(issued.body.secret as string);
    await createTask(project, { title: 'With the key' });
    expect(log.raw).not.toContain(project.key);
    expect(log.raw).not.toContain(issued.body.secret);
    expect(log.raw).not.toContain(ADMIN_TOKEN);
    expect(log.raw).not.toMatch(/authorization|bearer/i);
  });

  async function withKeyHeader(secret: string): Promise<void> {
    await t.http.get('/api/v1/members').set('Authorization', `Bearer ${secret}`).expect(200);
  }

  it('redacts secrets in logged objects and in messages: keys, webhook secrets, tokens, Authorization', () => {
    const logger = new Logger('RedactionCheck');
    logger.log({
      msg: 'delivery settings',
      webhook: { url: 'https://example.com/hook', secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=' },
      headers: { authorization: 'Bearer tsk_0123456789abcdef0123456789abcdef', Cookie: 'session=s3cr3t', accept: 'application/json' },
      token: 'plain-token-value',
    });
    logger.warn('retrying with tsk_0123456789abcdef0123456789abcdef and Bearer abc.def.ghi and whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=');
    const lines = log.lines.filter((line) => line.context === 'RedactionCheck');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      webhook: { url: 'https://example.com/hook', secret: '[redacted]' },
      headers: { authorization: '[redacted]', Cookie: '[redacted]', accept: 'application/json' },
      token: '[redacted]',
    });
    expect(lines[1].msg).toBe('retrying with tsk_[redacted] and Bearer [redacted] and whsec_[redacted]');
    expect(JSON.stringify(lines)).not.toMatch(/0123456789abcdef|c2VjcmV0|plain-token-value|abc\.def\.ghi|s3cr3t/);
  });

  it('writes every line of a request with its request id, and an unexpected error with its stack', async () => {
    const list = jest.spyOn(t.app.get(SprintsService), 'list').mockImplementationOnce(async () => {
      new Logger('Sprints').warn('about to fail');
      throw new Error('sprint storage exploded near tsk_0123456789abcdef0123456789abcdef');
    });
    try {
      const res = await project.api.get('/api/v1/sprints').set('X-Request-Id', 'boom-1').expect(500);
      expect(res.body).toMatchObject({ code: 'internal' });
      expect(JSON.stringify(res.body)).not.toMatch(/exploded|at /);
    } finally {
      list.mockRestore();
    }
    const lines = log.of('boom-1');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 'warn', context: 'Sprints', msg: 'about to fail' });
    expect(lines[1]).toMatchObject({
      level: 'error',
      status: 500,
      route: '/api/v1/sprints',
      keyId,
      err: { type: 'Error', message: 'sprint storage exploded near tsk_[redacted]' },
    });
    expect((lines[1].err as { stack: string }).stack).toMatch(/^Error: sprint storage exploded near tsk_\[redacted\]\n\s+at /);
  });

  it('writes health, readiness and metrics requests at debug, every other request at info', async () => {
    for (const path of ['/health', '/ready', '/metrics']) {
      await t.http
        .get(path)
        .set('X-Request-Id', `quiet${path.replace('/', '-')}`)
        .expect(200);
      expect(log.of(`quiet${path.replace('/', '-')}`)).toEqual([expect.objectContaining({ level: 'debug', route: path, status: 200 })]);
    }
    await t.http.get('/docs/openapi.json').set('X-Request-Id', 'docs-1').expect(200);
    expect(log.of('docs-1')).toEqual([expect.objectContaining({ level: 'info', status: 200 })]);
  });

  it.each([
    ['abc-DEF_1.2', true],
    ['x'.repeat(128), true],
    ['x'.repeat(129), false],
    ['has space', false],
    ['caf\u00e9', false],
    ['a/b', false],
    ['', false],
  ])(
    'keeps the X-Request-Id %j when it matches ^[A-Za-z0-9._-]{1,128}$ (%s), makes one otherwise, echoes it and logs with it',
    async (given, kept) => {
      const res = await t.http.get('/health').set('X-Request-Id', given);
      const id = res.headers['x-request-id'];
      if (kept) expect(id).toBe(given);
      else expect(id).toMatch(UUID);
      expect(log.of(id)).toHaveLength(1);
    },
  );

  it('makes a different request id for every request that brings none', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await t.http.get('/health')).headers['x-request-id']);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(UUID);
  });
});
