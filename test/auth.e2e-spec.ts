import { createHash } from 'node:crypto';
import { ALL_PERMISSIONS, Permission } from '../src/auth/permissions';
import { createProject, createTask, withKey, useProject } from './support/fixtures';
import { ADMIN_TOKEN, useTestApp } from './support/test-app';

describe('keys and authentication', () => {
  const t = useTestApp();
  const project = useProject(t);

  function expectUnauthenticated(res: { status: number; headers: Record<string, string>; body: { code: string } }) {
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('unauthenticated');
  }

  it('answers 401 with WWW-Authenticate: Bearer when no Authorization header is sent', async () => {
    expectUnauthenticated(await t.http.get('/api/v1/members'));
  });

  it('answers 401 when the Authorization header is not a Bearer key', async () => {
    expectUnauthenticated(await t.http.get('/api/v1/members').set('Authorization', `Basic ${Buffer.from('a:b').toString('base64')}`));
    expectUnauthenticated(await t.http.get('/api/v1/members').set('Authorization', 'Bearer'));
  });

  it('answers 401 for an unknown key', async () => {
    expectUnauthenticated(await withKey(t, 'tsk_not-a-key-of-this-service').get('/api/v1/members'));
  });

  it('does not accept the admin token as a project key', async () => {
    expectUnauthenticated(await withKey(t, ADMIN_TOKEN).get('/api/v1/members'));
  });

  it('accepts a valid key and acts on its own project only', async () => {
    const other = await createProject(t, 'Other project');
    const mine = await project.api.get('/api/v1/members').expect(200);
    const theirs = await other.api.get('/api/v1/members').expect(200);
    expect(mine.body.members.map((m: { membershipId: string }) => m.membershipId).sort()).toEqual(project.members.map((m) => m.membershipId).sort());
    expect(theirs.body.members.map((m: { membershipId: string }) => m.membershipId)).not.toContain(project.members[0].membershipId);
  });

  it('accepts the Bearer scheme name in any case', async () => {
    await t.http.get('/api/v1/members').set('Authorization', `bearer ${project.key}`).expect(200);
  });

  it('stops accepting a key at once when it is revoked', async () => {
    const key = await project.issueKey([], 'Soon revoked');
    await key.api.get('/api/v1/members').expect(200);
    await withKey(t, ADMIN_TOKEN).delete(`/admin/v1/keys/${key.id}`).expect(204);
    expectUnauthenticated(await key.api.get('/api/v1/members'));
  });

  it('stores keys only as a sha256 hash, with a readable tsk_ prefix', async () => {
    const key = await project.issueKey(['tasks:create'], 'Hashed');
    expect(key.secret).toMatch(/^tsk_[A-Za-z0-9_-]{43}$/);
    const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(row.secretHash).toBe(createHash('sha256').update(key.secret).digest('hex'));
    expect(row.prefix).toBe(key.secret.slice(0, 12));
    expect(JSON.stringify(row)).not.toContain(key.secret);
  });

  it('records when a key was last used', async () => {
    const key = await project.issueKey([], 'Used');
    await key.api.get('/api/v1/labels').expect(200);
    let lastUsedAt: Date | null = null;
    for (let attempt = 0; attempt < 50 && !lastUsedAt; attempt++) {
      lastUsedAt = (await t.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt;
      if (!lastUsedAt) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lastUsedAt).toBeInstanceOf(Date);
  });

  describe('permissions', () => {
    // Every write route and the permission it needs; reads need none.
    const routes: { permission: Permission; method: 'post' | 'patch' | 'delete'; path: (ids: Ids) => string; body?: (ids: Ids) => object }[] = [
      { permission: 'tasks:create', method: 'post', path: () => '/api/v1/tasks', body: () => ({ title: 'T' }) },
      { permission: 'tasks:edit', method: 'patch', path: (ids) => `/api/v1/tasks/${ids.task}`, body: () => ({ title: 'T2' }) },
      {
        permission: 'tasks:edit',
        method: 'post',
        path: (ids) => `/api/v1/tasks/${ids.task}/dependencies`,
        body: (ids) => ({ blockedById: ids.blocker }),
      },
      { permission: 'tasks:edit', method: 'delete', path: (ids) => `/api/v1/tasks/${ids.task}/dependencies/${ids.blocker}` },
      { permission: 'tasks:delete', method: 'delete', path: (ids) => `/api/v1/tasks/${ids.task}` },
      { permission: 'tasks:delete', method: 'post', path: (ids) => `/api/v1/trash/${ids.trashed}/restore` },
      { permission: 'tasks:delete', method: 'delete', path: (ids) => `/api/v1/trash/${ids.trashed}` },
      { permission: 'comments:write', method: 'post', path: (ids) => `/api/v1/tasks/${ids.task}/comments`, body: () => ({ body: 'Hi' }) },
      { permission: 'sprints:manage', method: 'post', path: () => '/api/v1/sprints', body: () => ({ name: 'S' }) },
      { permission: 'sprints:manage', method: 'patch', path: (ids) => `/api/v1/sprints/${ids.sprint}`, body: () => ({ name: 'S2' }) },
      { permission: 'sprints:manage', method: 'delete', path: (ids) => `/api/v1/sprints/${ids.sprint}` },
    ];
    interface Ids {
      task: string;
      blocker: string;
      trashed: string;
      sprint: string;
    }
    let ids: Ids;
    beforeAll(async () => {
      const [task, blocker, trashed] = [await createTask(project), await createTask(project), await createTask(project)];
      await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: blocker.id }).expect(201);
      await project.api.delete(`/api/v1/tasks/${trashed.id}`).expect(204);
      const sprint = (await project.api.post('/api/v1/sprints', { name: 'S' }).expect(201)).body.sprint;
      ids = { task: task.id, blocker: blocker.id, trashed: trashed.id, sprint: sprint.id };
    });

    it.each(
      routes.map(
        (route) =>
          [
            `${route.method.toUpperCase()} ${route.path({ task: '{taskId}', blocker: '{blockedById}', trashed: '{taskId}', sprint: '{sprintId}' } as Ids)}`,
            route,
          ] as const,
      ),
    )('answers 403 insufficient_permission naming the permission on %s, and changes nothing', async (_name, route) => {
      const others = ALL_PERMISSIONS.filter((permission) => permission !== route.permission);
      const key = await project.issueKey([...others], `Without ${route.permission}`);
      const before = await snapshot();
      const res = await key.api[route.method](route.path(ids), route.body?.(ids)).expect(403);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 403, code: 'insufficient_permission', requiredPermission: route.permission });
      expect(await snapshot()).toEqual(before);
    });

    it('lets a key without any permission read everything', async () => {
      const reader = await project.issueKey([], 'Reader');
      for (const path of [
        '/api/v1/tasks',
        `/api/v1/tasks/${ids.task}`,
        `/api/v1/tasks/${ids.task}/history`,
        `/api/v1/tasks/${ids.task}/comments`,
        '/api/v1/sprints',
        `/api/v1/sprints/${ids.sprint}`,
        '/api/v1/trash',
        '/api/v1/members',
        '/api/v1/labels',
      ]) {
        await reader.api.get(path).expect(200);
      }
    });

    it('checks the permission before the body: an invalid body without the permission is 403', async () => {
      const reader = await project.issueKey([], 'Reader 2');
      const res = await reader.api.post('/api/v1/tasks', { nonsense: true }).expect(403);
      expect(res.body.code).toBe('insufficient_permission');
    });

    async function snapshot() {
      const [tasks, sprints, dependencies, history] = await Promise.all([
        t.prisma.task.findMany({ where: { projectId: project.id }, orderBy: { id: 'asc' } }),
        t.prisma.sprint.findMany({ where: { projectId: project.id }, orderBy: { id: 'asc' } }),
        t.prisma.taskDependency.count({ where: { projectId: project.id } }),
        t.prisma.historyEntry.count({ where: { projectId: project.id } }),
      ]);
      return { tasks, sprints, dependencies, history };
    }
  });
});
