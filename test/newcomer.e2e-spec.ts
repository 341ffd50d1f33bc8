import { isCatchAllRoute } from '../src/common/http/catch-all';
import { ALL_PERMISSIONS } from '../src/auth/permissions';
import { asAdmin, createProject, createTask, NO_SUCH_ID, TaskJson, useProject } from './support/fixtures';
import { TestApp, useTestApp } from './support/test-app';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The routes the Express router holds (the catch-all apart), each with the methods it serves: read from the app, not listed. */
function routerRoutes(t: TestApp): { path: string; methods: string[] }[] {
  const layers: Json[] = t.app.getHttpAdapter().getInstance().router.stack;
  return layers
    .filter((layer) => layer.route && !isCatchAllRoute(layer.route))
    .map((layer) => ({ path: layer.route.path as string, methods: Object.keys(layer.route.methods).map((method) => method.toUpperCase()) }));
}

// decisions.md section 26: what a newcomer trips on, each rule through HTTP.
describe('what a newcomer trips on (decisions.md section 26)', () => {
  const t = useTestApp();
  const project = useProject(t, 'Newcomer');

  describe('routes', () => {
    it('answers a method that a path does not serve 405 method_not_allowed with Allow, on every route the router holds, without a key', async () => {
      const routes = routerRoutes(t);
      expect(routes.length).toBeGreaterThan(40);
      const problems: string[] = [];
      let checked = 0;
      for (const path of new Set(routes.map((route) => route.path.replace(/:\w+/g, NO_SUCH_ID)))) {
        // What serves this path: the routes of that very path when it has no parameter (ids are UUIDs:
        // `bulk` is no task's id), else every route whose template it fits.
        const literal = routes.filter((route) => route.path === path);
        const serving = literal.length > 0 ? literal : routes.filter((route) => new RegExp(`^${route.path.replace(/:\w+/g, '[^/]+')}$`).test(path));
        const served = new Set(serving.flatMap((route) => route.methods));
        if (served.has('GET')) served.add('HEAD');
        const allow = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((method) => served.has(method) || method === 'OPTIONS');
        for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => !served.has(method))) {
          checked++;
          const res = await (t.http as Json)[method.toLowerCase()](path);
          if (res.status !== 405 || res.headers.allow !== allow.join(', ') || (method !== 'HEAD' && res.body.code !== 'method_not_allowed')) {
            problems.push(`${method} ${path}: ${res.status} ${res.body?.code ?? ''} Allow: ${res.headers.allow} (expected ${allow.join(', ')})`);
          }
        }
      }
      expect(checked).toBeGreaterThan(100);
      expect(problems).toEqual([]);
    });

    it('answers 405 on a path of its own that a route with an id would fit (GET /api/v1/tasks/bulk), with or without a key', async () => {
      for (const [method, path] of [
        ['get', '/api/v1/tasks/bulk'],
        ['patch', '/api/v1/tasks/move'],
        ['delete', '/api/v1/tasks/bulk'],
      ] as const) {
        for (const key of [null, project.key]) {
          const request = t.http[method](path);
          const res = await (key ? request.set('Authorization', `Bearer ${key}`) : request).expect(405);
          expect(res.headers.allow).toBe('POST, OPTIONS');
          expect(res.body).toMatchObject({ code: 'method_not_allowed' });
        }
      }
    });

    it('names the route and the methods it serves in the 405', async () => {
      const res = await t.http.put(`/api/v1/tasks/${NO_SUCH_ID}`).send({ title: 'x' }).expect(405);
      expect(res.headers.allow).toBe('GET, HEAD, PATCH, DELETE, OPTIONS');
      expect(res.body).toMatchObject({ status: 405, code: 'method_not_allowed' });
      expect(res.body.detail).toContain('/api/v1/tasks/{taskId}');
    });

    it('answers an unknown path under /api/v1 404 not_found without a key, before authentication, with the RateLimit-* headers', async () => {
      for (const path of ['/api/v1/taks', '/api/v1', '/api/v1/tasks/x/nope']) {
        const res = await t.http.get(path).expect(404);
        expect(res.body).toMatchObject({ code: 'not_found' });
        expect(res.headers['www-authenticate']).toBeUndefined();
        for (const header of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(res.headers[header]).toBeDefined();
      }
      const withBadKey = await t.http.post('/api/v1/taks').set('Authorization', 'Bearer tsk_nope').send({}).expect(404);
      expect(withBadKey.body.code).toBe('not_found');
      await t.http.get('/api/v1/tasks').expect(401); // a real route still needs the key
    });

    it('keeps answering CORS preflights of /api/v1 204 without a key', async () => {
      const res = await t.http
        .options(`/api/v1/tasks/${NO_SUCH_ID}`)
        .set('Origin', 'https://board.example.org')
        .set('Access-Control-Request-Method', 'PATCH')
        .expect(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });

    it('answers GET / with the service’s name and version, links to /docs, /docs/openapi.json and /health, and whether the admin interface is on', async () => {
      const res = await t.http.get('/').expect(200);
      const pkg = require('../package.json') as { name: string; version: string };
      expect(res.body).toMatchObject({
        name: pkg.name,
        version: pkg.version,
        links: { docs: '/docs', openapi: '/docs/openapi.json', health: '/health' },
        adminInterface: { enabled: true, path: '/admin/v1' },
      });
      for (const link of ['/docs', '/docs/openapi.json', '/health']) await t.http.get(link).expect(200);
    });
  });

  it('answers any body sent to a route that takes none 400 unknown_field, so that such a route never answers 413 or 415', async () => {
    const task = await createTask(project, { title: 'Bodiless' });
    for (const send of [
      () => project.api.get(`/api/v1/tasks/${task.id}`).set('Content-Type', 'text/plain').send('hello'),
      () =>
        project.api
          .get('/api/v1/tasks')
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ q: 'x'.repeat(1024 * 1024) })),
      () => project.api.get('/api/v1/tasks').set('Content-Type', 'application/json').send('[1, 2'),
      () => project.api.post(`/api/v1/trash/${NO_SUCH_ID}/restore`).set('Content-Type', 'application/xml').send('<a/>'),
    ]) {
      const res = await send();
      expect([res.status, res.body.code]).toEqual([400, 'unknown_field']);
    }
    await project.api.get(`/api/v1/tasks/${task.id}`).send({}).expect(200); // an empty object is no body to refuse
  });

  it('answers status in a sprint body 400 read_only_field whose detail names the admin routes that change it', async () => {
    const created = await project.api.post('/api/v1/sprints', { name: 'Sprint', status: 'active' }).expect(400);
    const sprint = (await project.api.post('/api/v1/sprints', { name: 'Sprint' }).expect(201)).body.sprint;
    const patched = await project.api.patch(`/api/v1/sprints/${sprint.id}`, { status: 'active' }).expect(400);
    for (const res of [created, patched]) {
      expect(res.body).toMatchObject({ code: 'read_only_field', errors: [{ field: 'status' }] });
      expect(res.body.detail).toContain('POST /admin/v1/sprints/{sprintId}/activate');
      expect(res.body.detail).toContain('POST /admin/v1/sprints/{sprintId}/close');
      expect(res.body.detail).toContain('ADMIN_TOKEN');
    }
  });

  describe('a task in the trash asked for by a live-task endpoint: 404 not_found with inTrash and the restore route', () => {
    let trashed: TaskJson;
    let live: TaskJson;
    beforeAll(async () => {
      [trashed, live] = [await createTask(project, { title: 'In the trash' }), await createTask(project, { title: 'Live' })];
      await project.api.post(`/api/v1/tasks/${trashed.id}/dependencies`, { blockedById: live.id }).expect(201);
      await project.api.delete(`/api/v1/tasks/${trashed.id}`).expect(204);
    });
    const expectInTrash = (res: { status: number; body: Json }) => {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', inTrash: true });
      expect(res.body.detail).toContain('POST /api/v1/trash/{taskId}/restore');
      expect(res.body.detail).toContain(`/api/v1/trash/${trashed.id}/restore`);
    };
    const endpoints: [string, () => Promise<{ status: number; body: Json }>][] = [
      ['GET /tasks/{taskId}', () => project.api.get(`/api/v1/tasks/${trashed.id}`)],
      ['PATCH /tasks/{taskId}', () => project.api.patch(`/api/v1/tasks/${trashed.id}`, { title: 'Changed' })],
      ['DELETE /tasks/{taskId}', () => project.api.delete(`/api/v1/tasks/${trashed.id}`)],
      ['POST /tasks/{taskId}/move', () => project.api.post(`/api/v1/tasks/${trashed.id}/move`, { to: 'top' })],
      ['POST /tasks/move', () => project.api.post('/api/v1/tasks/move', { taskIds: [live.id, trashed.id], to: 'top' })],
      ['POST /tasks/{taskId}/move against a task in the trash', () => project.api.post(`/api/v1/tasks/${live.id}/move`, { before: trashed.id })],
      ['POST /tasks/{taskId}/dependencies', () => project.api.post(`/api/v1/tasks/${trashed.id}/dependencies`, { blockedById: live.id })],
      ['DELETE /tasks/{taskId}/dependencies/{blockedById}', () => project.api.delete(`/api/v1/tasks/${trashed.id}/dependencies/${live.id}`)],
      ['GET /tasks/{taskId}/history', () => project.api.get(`/api/v1/tasks/${trashed.id}/history`)],
      ['GET /tasks/{taskId}/comments', () => project.api.get(`/api/v1/tasks/${trashed.id}/comments`)],
      ['POST /tasks/{taskId}/comments', () => project.api.post(`/api/v1/tasks/${trashed.id}/comments`, { body: 'Hello' })],
      ['GET /tasks/{taskId}/comments/{commentId}', () => project.api.get(`/api/v1/tasks/${trashed.id}/comments/${NO_SUCH_ID}`)],
      ['PATCH /tasks/{taskId}/comments/{commentId}', () => project.api.patch(`/api/v1/tasks/${trashed.id}/comments/${NO_SUCH_ID}`, { body: 'Hi' })],
      ['DELETE /tasks/{taskId}/comments/{commentId}', () => project.api.delete(`/api/v1/tasks/${trashed.id}/comments/${NO_SUCH_ID}`)],
      ['GET /tasks/{taskId}/comments/{commentId}/revisions', () => project.api.get(`/api/v1/tasks/${trashed.id}/comments/${NO_SUCH_ID}/revisions`)],
    ];
    it.each(endpoints)('says so on %s', async (_name, send) => {
      expectInTrash(await send());
    });

    it('says so to a key without any permission, which can read the trash', async () => {
      const reader = await project.issueKey([], 'Reader');
      expectInTrash(await reader.api.get(`/api/v1/tasks/${trashed.id}`));
      expectInTrash(await reader.api.get(`/api/v1/tasks/${trashed.id}/history`));
    });

    it('names the parent’s restore route for a subtask whose parent is in the trash too (restoring the subtask first is 409)', async () => {
      const parent = await createTask(project, { title: 'Trashed parent' });
      const subtask = await createTask(project, { title: 'Trashed with it', parentId: parent.id });
      await project.api.delete(`/api/v1/tasks/${parent.id}`).expect(204);
      for (const res of [
        await project.api.get(`/api/v1/tasks/${subtask.id}`),
        await project.api.get(`/api/v1/tasks/${subtask.id}/comments`),
        await project.api.patch(`/api/v1/tasks/${subtask.id}`, { title: 'Changed' }),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ code: 'not_found', inTrash: true });
        expect(res.body.detail).toContain('POST /api/v1/trash/{taskId}/restore');
        expect(res.body.detail).toContain(`POST /api/v1/trash/${parent.id}/restore`);
        expect(res.body.detail).toContain(`/api/v1/trash/${subtask.id}/restore`);
      }
      await project.api.post(`/api/v1/trash/${subtask.id}/restore`).expect(409);
      await project.api.post(`/api/v1/trash/${parent.id}/restore`).expect(200);
      await project.api.get(`/api/v1/tasks/${subtask.id}`).expect(200);
    });

    it('says nothing of the trash of another project, nor of a task that does not exist', async () => {
      const other = await createProject(t, 'Other trash');
      const theirs = await createTask(other, { title: 'Theirs' });
      await other.api.delete(`/api/v1/tasks/${theirs.id}`).expect(204);
      for (const id of [theirs.id, NO_SUCH_ID]) {
        const res = await project.api.get(`/api/v1/tasks/${id}`).expect(404);
        expect(res.body).toEqual(expect.not.objectContaining({ inTrash: expect.anything() }));
        expect(res.body.detail).toBe('Task not found');
      }
    });
  });

  describe('hints', () => {
    const unknownField = async (res: { status: number; body: Json }, field: string, hint: string | null) => {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('unknown_field');
      const error = res.body.errors.find((candidate: Json) => candidate.field === field);
      expect(error.message).toBe(`is not a field of this request${hint ? `; did you mean \`${hint}\`?` : ''}`);
      if (hint) expect(res.body.detail).toContain(`did you mean \`${hint}\`?`);
    };

    it('answers an unknown body field within a small edit distance of one of the endpoint’s fields with "did you mean"', async () => {
      await unknownField(await project.api.post('/api/v1/tasks', { titel: 'x' }), 'titel', 'title');
      await unknownField(await project.api.post('/api/v1/tasks', { title: 'x', label_ids: [] }), 'label_ids', 'labelIds');
      await unknownField(await project.api.post('/api/v1/tasks', { title: 'x', dueDat: null }), 'dueDat', 'dueDate');
      const task = await createTask(project, { title: 'Hinted' });
      await unknownField(await project.api.patch(`/api/v1/tasks/${task.id}`, { stauts: 'done' }), 'stauts', 'status');
      await unknownField(await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'x', priorty: 'high' }] }), 'tasks[0].priorty', 'priority');
      await unknownField(await project.api.post('/api/v1/sprints', { name: 'x', startdate: '2026-12-01' }), 'startdate', 'startDate');
      await unknownField(await project.api.get('/api/v1/tasks?stauts=todo'), 'stauts', 'status');
    });

    it('answers the names people send for a field (labels, storyPoints, points, assignee, sprint) with the field they mean', async () => {
      for (const [sent, meant] of [
        ['labels', 'labelIds'],
        ['storyPoints', 'estimate'],
        ['points', 'estimate'],
        ['assignee', 'assigneeId'],
        ['sprint', 'sprintId'],
      ]) {
        await unknownField(await project.api.post('/api/v1/tasks', { title: 'x', [sent]: null }), sent, meant);
      }
    });

    it('answers the names people send for a comment’s fields (text, content, message, comment; replyTo, inReplyTo) with body and parentId', async () => {
      const task = await createTask(project, { title: 'Commented' });
      for (const sent of ['text', 'content', 'message', 'comment']) {
        await unknownField(await project.api.post(`/api/v1/tasks/${task.id}/comments`, { [sent]: 'Hello' }), sent, 'body');
      }
      for (const sent of ['replyTo', 'inReplyTo']) {
        await unknownField(await project.api.post(`/api/v1/tasks/${task.id}/comments`, { body: 'Hello', [sent]: NO_SUCH_ID }), sent, 'parentId');
      }
    });

    it('answers the beginning of one field’s name (label, due, desc, start) with that field', async () => {
      for (const [sent, meant] of [
        ['label', 'labelIds'],
        ['due', 'dueDate'],
        ['desc', 'description'],
      ]) {
        await unknownField(await project.api.post('/api/v1/tasks', { title: 'x', [sent]: null }), sent, meant);
      }
      await unknownField(await project.api.post('/api/v1/sprints', { name: 'x', start: '2026-12-01' }), 'start', 'startDate');
    });

    it('offers no field that is far from the one sent, nor a read-only one', async () => {
      await unknownField(await project.api.post('/api/v1/tasks', { title: 'x', colour: 'red' }), 'colour', null);
      await unknownField(await project.api.post('/api/v1/sprints', { name: 'x', statu: 'active' }), 'statu', null);
      await unknownField(await project.api.get('/api/v1/tasks?x=1'), 'x', null);
    });

    it('answers a reference that is not an id 404, saying what it expects and where to find one', async () => {
      const task = await createTask(project, { title: 'Referenced' });
      for (const [body, field, list] of [
        [{ title: 'x', assigneeId: 'Ada' }, 'assigneeId', 'GET /api/v1/members'],
        [{ title: 'x', labelIds: ['bug'] }, 'labelIds', 'GET /api/v1/labels'],
        [{ title: 'x', sprintId: 'Sprint 1' }, 'sprintId', 'GET /api/v1/sprints'],
        [{ title: 'x', parentId: 'the parent' }, 'parentId', 'GET /api/v1/tasks'],
      ] as const) {
        const res = await project.api.post('/api/v1/tasks', body).expect(404);
        expect(res.body).toMatchObject({ code: 'not_found', errors: [{ field }] });
        expect(res.body.errors[0].message).toMatch(/^is not an id: it expects /);
        expect(res.body.errors[0].message).toContain(list);
        expect(res.body.detail).toContain(list);
      }
      const assignee = await project.api.patch(`/api/v1/tasks/${task.id}`, { assigneeId: 'Ada' }).expect(404);
      expect(assignee.body.errors[0].message).toBe(
        'is not an id: it expects the membershipId (a UUID) of a member of this project, which GET /api/v1/members lists',
      );
      for (const [res, field] of [
        [await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: 'abc' }), 'blockedById'],
        [await project.api.post(`/api/v1/tasks/${task.id}/move`, { before: 'abc' }), 'before'],
        [await project.api.post('/api/v1/tasks/move', { taskIds: [task.id, 'abc'], to: 'top' }), 'taskIds[1]'],
      ] as const) {
        expect(res.status).toBe(404);
        expect(res.body.errors[0]).toMatchObject({ field, message: expect.stringContaining('GET /api/v1/tasks') });
      }
      const comment = await project.api.post(`/api/v1/tasks/${task.id}/comments`, { body: 'x', parentId: 'nope' }).expect(404);
      expect(comment.body.errors[0]).toEqual({
        field: 'parentId',
        message: 'is not an id: it expects the id (a UUID) of a top-level comment of this task, which GET /api/v1/tasks/{taskId}/comments lists',
      });
      // A UUID in capitals is not an id (ids are compared as the service writes them), and it is told why.
      const capitals = await project.api.patch(`/api/v1/tasks/${task.id}`, { sprintId: 'ABCDEF00-0000-4000-8000-00000000000A' });
      expect(capitals.status).toBe(404);
      expect(capitals.body.errors[0].message).toMatch(/^is not an id: ids are in lower case, as the service issues them; it expects /);
      // An id of the right shape that names nothing here says where to find one too.
      const missing = await project.api.post('/api/v1/tasks', { title: 'x', assigneeId: NO_SUCH_ID }).expect(404);
      expect(missing.body.errors[0].message).toBe('is not a member of this project; GET /api/v1/members lists them');
    });

    it('names WEBHOOK_ALLOW_PRIVATE_URLS when a webhook URL is refused for being http:// or private', async () => {
      for (const url of ['http://localhost:4000/hooks', 'https://127.0.0.1/hooks', 'https://10.1.2.3/hooks']) {
        const res = await project.api.post('/api/v1/webhooks', { url, events: ['*'] }).expect(400);
        expect(res.body).toMatchObject({ code: 'invalid_webhook_url', errors: [{ field: 'url' }] });
        expect(res.body.errors[0].message).toContain('WEBHOOK_ALLOW_PRIVATE_URLS=true');
      }
      const withPassword = await project.api.post('/api/v1/webhooks', { url: 'https://user:pw@8.8.8.8/', events: ['*'] }).expect(400);
      expect(withPassword.body.errors[0].message).not.toContain('WEBHOOK_ALLOW_PRIVATE_URLS');
    });

    it('names the permission that is not one, and the permissions there are', async () => {
      const res = await asAdmin(t)
        .post(`/admin/v1/projects/${project.id}/keys`, { name: 'Bad', permissions: ['tasks:create', 'tasks:write'] })
        .expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'permissions' }] });
      expect(res.body.errors[0].message).toContain('"tasks:write"');
      for (const permission of ALL_PERMISSIONS) expect(res.body.errors[0].message).toContain(permission);
      expect(res.body.detail).toContain('"tasks:write"');
    });

    it('names the active sprint (activeSprintId) when another sprint is activated meanwhile', async () => {
      const sprints = [];
      for (const name of ['Active', 'Next']) sprints.push((await project.api.post('/api/v1/sprints', { name }).expect(201)).body.sprint);
      await asAdmin(t).post(`/admin/v1/sprints/${sprints[0].id}/activate`).expect(200);
      const res = await asAdmin(t).post(`/admin/v1/sprints/${sprints[1].id}/activate`).expect(409);
      expect(res.body).toMatchObject({ code: 'conflict', activeSprintId: sprints[0].id });
      expect(res.body.detail).toContain(sprints[0].id);
      await asAdmin(t).post(`/admin/v1/sprints/${sprints[0].id}/close`, {}).expect(200);
    });
  });

  it('answers POST /api/v1/sprints and the admin creates (projects, members, labels, keys) with the new resource’s address in Location', async () => {
    const admin = asAdmin(t);
    const sprint = await project.api.post('/api/v1/sprints', { name: 'Located' }).expect(201);
    expect(sprint.headers.location).toBe(`/api/v1/sprints/${sprint.body.sprint.id}`);
    expect((await project.api.get(sprint.headers.location).expect(200)).body).toEqual(sprint.body);
    const created = await admin.post('/admin/v1/projects', { name: 'Located' }).expect(201);
    expect(created.headers.location).toBe(`/admin/v1/projects/${created.body.project.id}`);
    expect((await admin.get(created.headers.location).expect(200)).body).toEqual(created.body);
    const projectId = created.body.project.id;
    const member = await admin.post(`/admin/v1/projects/${projectId}/members`, { name: 'Ada' }).expect(201);
    expect(member.headers.location).toBe(`/admin/v1/members/${member.body.member.membershipId}`);
    const label = await admin.post(`/admin/v1/projects/${projectId}/labels`, { name: 'bug', color: '#d73a4a' }).expect(201);
    expect(label.headers.location).toBe(`/admin/v1/labels/${label.body.label.id}`);
    const key = await admin.post(`/admin/v1/projects/${projectId}/keys`, { name: 'Located', permissions: [] }).expect(201);
    expect(key.headers.location).toBe(`/admin/v1/keys/${key.body.key.id}`);
    // Each address is the one its other routes take: a rename, a recolour, a revocation.
    await admin.patch(member.headers.location, { name: 'Ada L.' }).expect(200);
    await admin.patch(label.headers.location, { color: '#000000' }).expect(200);
    await admin.delete(key.headers.location).expect(204);
  });

  describe('a cursor belongs to the query that issued it', () => {
    let cursorOf: (url: string) => Promise<string>;
    beforeAll(async () => {
      for (let i = 0; i < 5; i++) await createTask(project, { title: `Paged ${i}`, status: i % 2 ? 'todo' : 'backlog', estimate: i });
      cursorOf = async (url) => {
        const cursor = (await project.api.get(url).expect(200)).body.nextCursor;
        expect(cursor).toEqual(expect.any(String));
        return cursor;
      };
    });
    const next = (url: string, cursor: string) => project.api.get(`${url}${url.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`);
    const refusedAsAnotherQuery = async (url: string, cursor: string) => {
      const res = await next(url, cursor).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_cursor', errors: [{ field: 'cursor' }] });
      expect(res.body.detail).toMatch(/another query/);
      expect(res.body.detail).not.toMatch(/not a cursor this service issued/);
    };

    it('refuses a task list cursor sent with another filter: 400 invalid_cursor saying it belongs to another query', async () => {
      const cursor = await cursorOf('/api/v1/tasks?limit=1');
      await refusedAsAnotherQuery('/api/v1/tasks?limit=1&status=todo', cursor);
      await refusedAsAnotherQuery('/api/v1/tasks?limit=1&estimated=true', cursor);
      const filtered = await cursorOf('/api/v1/tasks?limit=1&status=todo,backlog');
      await refusedAsAnotherQuery('/api/v1/tasks?limit=1&status=todo', filtered);
      await refusedAsAnotherQuery('/api/v1/tasks?limit=1', filtered);
    });

    it('refuses a task list cursor sent with another q', async () => {
      const cursor = await cursorOf('/api/v1/tasks?limit=1&q=Paged');
      await refusedAsAnotherQuery('/api/v1/tasks?limit=1&q=Page', cursor);
      await refusedAsAnotherQuery('/api/v1/tasks?limit=1', cursor);
    });

    it('refuses a task list cursor sent with another sort, either way', async () => {
      await refusedAsAnotherQuery('/api/v1/tasks?limit=1&sort=rank', await cursorOf('/api/v1/tasks?limit=1'));
      await refusedAsAnotherQuery('/api/v1/tasks?limit=1', await cursorOf('/api/v1/tasks?limit=1&sort=rank'));
    });

    it('takes a cursor with another limit, and with the default order spelled out (sort=created)', async () => {
      const cursor = await cursorOf('/api/v1/tasks?limit=1&status=todo,backlog');
      const page = (await next('/api/v1/tasks?limit=3&status=todo,backlog', cursor).expect(200)).body;
      expect(page.tasks).toHaveLength(3);
      await next('/api/v1/tasks?status=todo,backlog&sort=created', cursor).expect(200);
      await next('/api/v1/tasks?limit=2&sort=rank', await cursorOf('/api/v1/tasks?limit=1&sort=rank')).expect(200);
    });

    it('refuses a trash list cursor sent to the task list, and a task list cursor sent to the trash, as another list', async () => {
      for (let i = 0; i < 2; i++) await project.api.delete(`/api/v1/tasks/${(await createTask(project, { title: `Trashed ${i}` })).id}`).expect(204);
      const trash = await cursorOf('/api/v1/trash?limit=1');
      await next('/api/v1/trash?limit=5', trash).expect(200);
      const res = await next('/api/v1/tasks?limit=1', trash).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_cursor' });
      expect(res.body.detail).toMatch(/another list/);
      expect((await next('/api/v1/trash', await cursorOf('/api/v1/tasks?limit=1')).expect(400)).body.detail).toMatch(/another list/);
    });

    it('refuses a history cursor of one task sent to the history of another', async () => {
      const [a, b] = [await createTask(project, { title: 'History A' }), await createTask(project, { title: 'History B' })];
      for (const task of [a, b]) for (const title of ['1', '2']) await project.api.patch(`/api/v1/tasks/${task.id}`, { title }).expect(200);
      const cursor = await cursorOf(`/api/v1/tasks/${a.id}/history?limit=1`);
      await next(`/api/v1/tasks/${a.id}/history?limit=2`, cursor).expect(200);
      await refusedAsAnotherQuery(`/api/v1/tasks/${b.id}/history?limit=1`, cursor);
    });

    it('refuses a delivery log cursor of one webhook sent to the log of another', async () => {
      const hook = async () =>
        (await project.api.post('/api/v1/webhooks', { url: 'https://8.8.8.8:9/hooks', events: ['*'] }).expect(201)).body.webhook as TaskJson;
      const [a, b] = [await hook(), await hook()];
      for (let i = 0; i < 2; i++) await createTask(project, { title: `Delivered ${i}` });
      const cursor = await cursorOf(`/api/v1/webhooks/${a.id}/deliveries?limit=1`);
      await refusedAsAnotherQuery(`/api/v1/webhooks/${b.id}/deliveries?limit=1`, cursor);
      for (const id of [a.id, b.id]) await project.api.delete(`/api/v1/webhooks/${id}`).expect(204);
    });
  });
});
