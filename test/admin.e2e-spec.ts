import { createProject, ISO_TIMESTAMP, TestProject, withKey } from './support/fixtures';
import { ADMIN_TOKEN, engine, useTestApp } from './support/test-app';

describe('admin interface', () => {
  const t = useTestApp();

  const admin = () => withKey(t, ADMIN_TOKEN);

  it('refuses a missing or wrong admin token with 401', async () => {
    const none = await t.http.post('/admin/v1/projects').send({ name: 'P' }).expect(401);
    expect(none.body.code).toBe('unauthenticated');
    expect(none.headers['www-authenticate']).toBe('Bearer');
    await withKey(t, 'wrong-token-wrong-token').post('/admin/v1/projects', { name: 'P' }).expect(401);
    await withKey(t, `${ADMIN_TOKEN}x`).post('/admin/v1/projects', { name: 'P' }).expect(401);
  });

  it('refuses project keys with 401', async () => {
    const project = await createProject(t);
    const res = await project.api.post('/admin/v1/projects', { name: 'P' }).expect(401);
    expect(res.body.code).toBe('unauthenticated');
  });

  it('creates a project', async () => {
    const res = await admin().post('/admin/v1/projects', { name: 'Apollo' }).expect(201);
    expect(res.body).toEqual({
      project: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Apollo',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
  });

  it('rejects a blank project name', async () => {
    const res = await admin().post('/admin/v1/projects', { name: '   ' }).expect(400);
    expect(res.body.code).toBe('validation_failed');
  });

  describe('in a project', () => {
    let project: TestProject;
    beforeAll(async () => {
      project = await createProject(t);
    });

    it('adds a member', async () => {
      const res = await admin().post(`/admin/v1/projects/${project.id}/members`, { name: 'Linus' }).expect(201);
      expect(res.body).toEqual({ member: { membershipId: expect.any(String), name: 'Linus' } });
      const list = await project.api.get('/api/v1/members').expect(200);
      expect(list.body.members).toContainEqual(res.body.member);
    });

    it('adds a label with its color in lower case', async () => {
      const res = await admin().post(`/admin/v1/projects/${project.id}/labels`, { name: 'ops', color: '#AABBCC' }).expect(201);
      expect(res.body).toEqual({ label: { id: expect.any(String), name: 'ops', color: '#aabbcc' } });
      const list = await project.api.get('/api/v1/labels').expect(200);
      expect(list.body.labels).toContainEqual(res.body.label);
    });

    it('rejects a label color that is not #rrggbb', async () => {
      for (const color of ['red', '#abc', 'aabbcc', '#gggggg']) {
        const res = await admin().post(`/admin/v1/projects/${project.id}/labels`, { name: `c${color}`, color });
        expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
      }
    });

    it('refuses a second label of the same name with 409', async () => {
      const res = await admin().post(`/admin/v1/projects/${project.id}/labels`, { name: 'bug', color: '#000000' }).expect(409);
      expect(res.body.code).toBe('conflict');
    });

    it('issues a key: the secret once, the key without it', async () => {
      const res = await admin()
        .post(`/admin/v1/projects/${project.id}/keys`, { name: 'Sync job', permissions: ['tasks:create', 'tasks:edit'] })
        .expect(201);
      expect(res.body).toEqual({
        key: {
          id: expect.any(String),
          name: 'Sync job',
          permissions: ['tasks:create', 'tasks:edit'],
          prefix: res.body.secret.slice(0, 12),
          createdAt: expect.any(String),
        },
        secret: expect.stringMatching(/^tsk_/),
      });
    });

    it('rejects an unknown permission', async () => {
      const res = await admin()
        .post(`/admin/v1/projects/${project.id}/keys`, { name: 'K', permissions: ['tasks:destroy'] })
        .expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ field: 'permissions' })] });
    });

    it('rejects a permission named twice: 400 validation_failed naming permissions, saying it is named twice', async () => {
      const res = await admin()
        .post(`/admin/v1/projects/${project.id}/keys`, { name: 'K', permissions: ['comments:write', 'comments:write'] })
        .expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'permissions', message: 'must not name a permission twice' }] });
      expect(res.body.detail).toBe('permissions must not name a permission twice');
    });

    it('answers 404 for a project that does not exist', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
        const res = await admin().post(`/admin/v1/projects/${id}/members`, { name: 'X' }).expect(404);
        expect(res.body.code).toBe('not_found');
      }
    });

    it('shows a label and a member alike in the lists (by name), in a task and in their events', async () => {
      const own = await createProject(t, 'One shape');
      const label = (await admin().post(`/admin/v1/projects/${own.id}/labels`, { name: 'a first', color: '#010203' }).expect(201)).body.label;
      const member = (await admin().post(`/admin/v1/projects/${own.id}/members`, { name: 'A first' }).expect(201)).body.member;
      const labels = (await own.api.get('/api/v1/labels').expect(200)).body.labels;
      const members = (await own.api.get('/api/v1/members').expect(200)).body.members;
      expect(labels[0]).toEqual(label);
      expect(members[0]).toEqual(member);
      expect(labels.map((l: { name: string }) => l.name)).toEqual(labels.map((l: { name: string }) => l.name).sort());
      const task = (await own.api.post('/api/v1/tasks', { title: 'Shows both', labelIds: [label.id], assigneeId: member.membershipId }).expect(201))
        .body.task;
      expect([task.labels, task.assignee]).toEqual([[label], member]);
      const events: { type: string; data: object }[] = (await own.api.get('/api/v1/events?limit=1000').expect(200)).body.events;
      expect(events.map((event) => event.data)).toEqual(expect.arrayContaining([{ label }, { member }]));
    });

    it('renames a member: tasks assigned to it show the new name', async () => {
      const [, grace] = project.members;
      const task = (await project.api.post('/api/v1/tasks', { title: 'Assigned', assigneeId: grace.membershipId }).expect(201)).body.task;
      const res = await admin().patch(`/admin/v1/members/${grace.membershipId}`, { name: 'Grace Hopper' }).expect(200);
      expect(res.body).toEqual({ member: { membershipId: grace.membershipId, name: 'Grace Hopper' } });
      expect((await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task.assignee).toEqual(res.body.member);
      expect((await project.api.get('/api/v1/members').expect(200)).body.members).toContainEqual(res.body.member);
    });

    it('refuses a member rename that is empty, blank, unknown or of no member', async () => {
      const [ada] = project.members;
      expect((await admin().patch(`/admin/v1/members/${ada.membershipId}`, {}).expect(400)).body.code).toBe('empty_body');
      expect((await admin().patch(`/admin/v1/members/${ada.membershipId}`, { name: ' ' }).expect(400)).body.code).toBe('validation_failed');
      expect((await admin().patch(`/admin/v1/members/${ada.membershipId}`, { role: 'x' }).expect(400)).body.code).toBe('unknown_field');
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
        expect((await admin().patch(`/admin/v1/members/${id}`, { name: 'X' }).expect(404)).body.code).toBe('not_found');
      }
    });

    it('changes a label: tasks carrying it show the new name and colour; another label of that name is 409', async () => {
      const own = await createProject(t, 'Label changes');
      const [bug, feature] = own.labels;
      const task = (await own.api.post('/api/v1/tasks', { title: 'Labelled', labelIds: [bug.id] }).expect(201)).body.task;
      const res = await admin().patch(`/admin/v1/labels/${bug.id}`, { name: 'defect', color: '#ABCDEF' }).expect(200);
      expect(res.body).toEqual({ label: { id: bug.id, name: 'defect', color: '#abcdef' } });
      expect((await own.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task.labels).toEqual([res.body.label]);
      const taken = await admin().patch(`/admin/v1/labels/${feature.id}`, { name: 'defect' }).expect(409);
      expect(taken.body.code).toBe('conflict');
      expect((await admin().patch(`/admin/v1/labels/${feature.id}`, { color: 'red' }).expect(400)).body.code).toBe('validation_failed');
      expect((await admin().patch('/admin/v1/labels/00000000-0000-4000-8000-000000000000', { name: 'x' }).expect(404)).body.code).toBe('not_found');
    });

    it('says a value of the wrong type is of the wrong type: a name that is not a string, permissions that are not an array', async () => {
      const own = await createProject(t, 'Wrong types');
      const [ada] = own.members;
      const [bug] = own.labels;
      for (const [method, path, body, field, message] of [
        ['post', '/admin/v1/projects', { name: 42 }, 'name', 'must be a string'],
        ['post', `/admin/v1/projects/${own.id}/members`, { name: 42 }, 'name', 'must be a string'],
        ['post', `/admin/v1/projects/${own.id}/labels`, { name: ['bug'], color: '#ff0000' }, 'name', 'must be a string'],
        ['patch', `/admin/v1/members/${ada.membershipId}`, { name: 42 }, 'name', 'must be a string'],
        ['patch', `/admin/v1/labels/${bug.id}`, { name: true }, 'name', 'must be a string'],
        ['post', `/admin/v1/projects/${own.id}/keys`, { name: 7, permissions: [] }, 'name', 'must be a string'],
        [
          'post',
          `/admin/v1/projects/${own.id}/keys`,
          { name: 'K', permissions: 'tasks:create' },
          'permissions',
          expect.stringMatching(/^must be an array/),
        ],
        ['post', `/admin/v1/projects/${own.id}/keys`, { name: 'K' }, 'permissions', expect.stringMatching(/^must be an array/)],
      ] as ['post' | 'patch', string, object, string, unknown][]) {
        const res = await admin()[method](path, body).expect(400);
        expect([path, res.body.code, res.body.errors]).toEqual([path, 'validation_failed', [{ field, message }]]);
      }
    });

    it('answers null as a member name, a label name or a label colour 400 validation_failed naming it: none can be cleared, nothing changes', async () => {
      const own = await createProject(t, 'Null names');
      const [ada] = own.members;
      const [bug] = own.labels;
      const feed = async () => (await own.api.get('/api/v1/events?limit=1000').expect(200)).body.nextAfter;
      const before = await feed();
      for (const [path, body, field] of [
        [`/admin/v1/members/${ada.membershipId}`, { name: null }, 'name'],
        [`/admin/v1/labels/${bug.id}`, { name: null }, 'name'],
        [`/admin/v1/labels/${bug.id}`, { color: null }, 'color'],
        [`/admin/v1/labels/${bug.id}`, { name: 'defect', color: null }, 'color'],
      ] as [string, object, string][]) {
        const res = await admin().patch(path, body).expect(400);
        expect([res.body.code, res.body.errors]).toEqual(['validation_failed', [{ field, message: expect.any(String) }]]);
      }
      expect((await own.api.get('/api/v1/members').expect(200)).body.members).toContainEqual(ada);
      expect((await own.api.get('/api/v1/labels').expect(200)).body.labels).toContainEqual(bug);
      expect(await feed()).toBe(before);
    });

    (engine === 'postgresql' ? it : it.skip)(
      'renames a label while tasks are created with it, all at once, without a deadlock or a retry (PostgreSQL)',
      async () => {
        const own = await createProject(t, 'Label race');
        const [bug] = own.labels;
        const retries = async () =>
          [...(await t.http.get('/metrics').expect(200)).text.matchAll(/^db_write_retries_total\{[^}]*\} (\d+)$/gm)].reduce(
            (sum, [, n]) => sum + Number(n),
            0,
          );
        const before = await retries();
        const answers = await Promise.all([
          ...Array.from({ length: 20 }, (_, i) => own.api.post('/api/v1/tasks', { title: `With the label ${i}`, labelIds: [bug.id] })),
          ...Array.from({ length: 6 }, (_, i) => admin().patch(`/admin/v1/labels/${bug.id}`, { name: `bug ${i}` })),
        ]);
        expect(answers.map((res) => res.status).sort()).toEqual([...Array(6).fill(200), ...Array(20).fill(201)].sort());
        expect(await retries()).toBe(before);
        const events = (await own.api.get('/api/v1/events?after=5&limit=1000').expect(200)).body.events;
        const renames = events.filter((event: { type: string }) => event.type === 'label.updated');
        // Each rename from the name the one before it left.
        for (let i = 1; i < renames.length; i++) expect(renames[i].data.changes[0].from).toBe(renames[i - 1].data.changes[0].to);
      },
    );

    it('lists every project, newest first', async () => {
      const older = (await admin().post('/admin/v1/projects', { name: 'Older' }).expect(201)).body.project;
      const newer = (await admin().post('/admin/v1/projects', { name: 'Newer' }).expect(201)).body.project;
      const { projects } = (await admin().get('/admin/v1/projects').expect(200)).body;
      expect(projects.slice(0, 2)).toEqual([newer, older]);
      expect(projects.map((listed: { id: string }) => listed.id)).toContain(project.id);
      const times = projects.map((listed: { createdAt: string }) => listed.createdAt);
      expect(times).toEqual([...times].sort().reverse());
    });

    it("lists a project's keys newest first, with lastUsedAt and revokedAt, never a secret or hash", async () => {
      const own = await createProject(t, 'Key list');
      const used = await own.issueKey(['tasks:create'], 'Used');
      const revoked = await own.issueKey([], 'Revoked');
      await admin().delete(`/admin/v1/keys/${revoked.id}`).expect(204);
      await used.api.get('/api/v1/tasks').expect(200);
      // The use is recorded in the background, without delaying the request.
      let keys: Record<string, unknown>[] = [];
      for (let tries = 0; tries < 50; tries++) {
        keys = (await admin().get(`/admin/v1/projects/${own.id}/keys`).expect(200)).body.keys;
        if (keys.find((key) => key.id === used.id)?.lastUsedAt) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(keys.map((key) => key.name)).toEqual(['Revoked', 'Used', 'Test key']);
      for (const key of keys) {
        expect(Object.keys(key).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name', 'permissions', 'prefix', 'revokedAt']);
        expect(JSON.stringify(key)).not.toContain(used.secret.slice(8));
      }
      expect(keys[0]).toMatchObject({ id: revoked.id, lastUsedAt: null, revokedAt: expect.stringMatching(ISO_TIMESTAMP) });
      expect(keys[1]).toMatchObject({
        id: used.id,
        permissions: ['tasks:create'],
        lastUsedAt: expect.stringMatching(ISO_TIMESTAMP),
        revokedAt: null,
      });
      expect(used.secret.startsWith(keys[1].prefix as string)).toBe(true);
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
        expect((await admin().get(`/admin/v1/projects/${id}/keys`).expect(404)).body.code).toBe('not_found');
      }
    });

    it('revokes a key once: a second revocation is 404', async () => {
      const key = await project.issueKey([], 'Temp');
      await admin().delete(`/admin/v1/keys/${key.id}`).expect(204);
      const again = await admin().delete(`/admin/v1/keys/${key.id}`).expect(404);
      expect(again.body.code).toBe('not_found');
      await admin().delete('/admin/v1/keys/nope').expect(404);
    });
  });
});

describe('admin interface without ADMIN_TOKEN', () => {
  const t = useTestApp({ adminToken: null });

  it('answers every admin path with 404, whatever the token', async () => {
    for (const res of [
      await t.http.post('/admin/v1/projects').send({ name: 'P' }),
      await withKey(t, ADMIN_TOKEN).post('/admin/v1/projects', { name: 'P' }),
      await withKey(t, ADMIN_TOKEN).delete('/admin/v1/keys/00000000-0000-4000-8000-000000000000'),
    ]) {
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    }
    expect(await t.prisma.project.count()).toBe(0);
  });
});
