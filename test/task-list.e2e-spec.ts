import { asAdmin, createProject, createTask, NO_SUCH_ID, TaskJson, TestProject } from './support/fixtures';
import { createTestDatabase, engine, startTestApp, TestApp, useTestApp } from './support/test-app';

describe('GET /api/v1/tasks', () => {
  const t = useTestApp();

  const ids = (res: { body: { tasks: TaskJson[] } }) => res.body.tasks.map((task) => task.id);

  /** Follows nextCursor to the end; every page must hold at least one task. */
  async function walk(project: TestProject, query: string, limit: number): Promise<{ ids: string[]; totals: number[] }> {
    const seen: string[] = [];
    const totals: number[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/tasks?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await project.api.get(url).expect(200);
      if (cursor) expect(res.body.tasks.length).toBeGreaterThan(0);
      seen.push(...ids(res));
      totals.push(res.body.total);
      cursor = res.body.nextCursor;
    } while (cursor);
    return { ids: seen, totals };
  }

  describe('shape, order and pages', () => {
    let project: TestProject;
    let created: TaskJson[];
    beforeAll(async () => {
      project = await createProject(t);
      created = [];
      for (let i = 0; i < 7; i++) created.push(await createTask(project, { title: `Task ${i}`, description: 'hidden in lists' }));
    });

    it('answers {tasks, nextCursor, total}, newest first, items without description nor dependencies', async () => {
      const res = await project.api.get('/api/v1/tasks').expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['nextCursor', 'tasks', 'total']);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(ids(res)).toEqual(created.map((task) => task.id).reverse());
      expect(res.body).toMatchObject({ nextCursor: null, total: 7 });
      for (const task of res.body.tasks) {
        expect(task).not.toHaveProperty('description');
        expect(task).not.toHaveProperty('dependencies');
        expect(typeof task.blocked).toBe('boolean');
      }
    });

    it('pages with limit and an opaque cursor: each task once, total on every page, null after the last', async () => {
      const { ids: seen, totals } = await walk(project, '', 3);
      expect(seen).toEqual(created.map((task) => task.id).reverse());
      expect(totals).toEqual([7, 7, 7]);
    });

    it('answers nextCursor null when the last page is exactly full', async () => {
      const res = await project.api.get('/api/v1/tasks?limit=7').expect(200);
      expect(res.body.nextCursor).toBeNull();
    });

    it('defaults limit to 50 and rejects a limit outside 1..100 or not an integer', async () => {
      for (let i = 0; i < 45; i++) await createTask(project, { title: `Filler ${i}` });
      const res = await project.api.get('/api/v1/tasks').expect(200);
      expect(res.body.tasks).toHaveLength(50);
      expect(res.body.nextCursor).toEqual(expect.any(String));
      for (const limit of ['0', '101', '-1', '2.5', 'ten', '', '1e1', '0x10', '10.0', '%205', '+5']) {
        const bad = await project.api.get(`/api/v1/tasks?limit=${limit}`);
        expect([bad.status, bad.body.code, bad.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', 'limit']);
      }
      await project.api.get('/api/v1/tasks?limit=100').expect(200);
      await project.api.get('/api/v1/tasks?limit=1').expect(200);
    });

    it('answers 400 invalid_cursor to a cursor it did not issue or that was altered', async () => {
      const cursor: string = (await project.api.get('/api/v1/tasks?limit=2').expect(200)).body.nextCursor;
      const [payload, signature] = cursor.split('.');
      const forged = Buffer.from(JSON.stringify(['tasks', '2030-01-01T00:00:00.000Z', NO_SUCH_ID])).toString('base64url');
      const flipped = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A');
      for (const bad of ['garbage', `${forged}.${signature}`, `${payload}.${flipped}`, `${payload}`, `${payload}.${signature}.x`]) {
        const res = await project.api.get(`/api/v1/tasks?cursor=${encodeURIComponent(bad)}`);
        expect([res.status, res.body.code]).toEqual([400, 'invalid_cursor']);
      }
    });

    it('answers 400 invalid_cursor to an empty cursor, also when the first page was answered before', async () => {
      await project.api.get('/api/v1/tasks?limit=2').expect(200);
      const res = await project.api.get('/api/v1/tasks?limit=2&cursor=');
      expect([res.status, res.body.code]).toEqual([400, 'invalid_cursor']);
    });

    it('refuses a cursor of another list (history) as invalid_cursor', async () => {
      const task = created[0];
      for (let i = 0; i < 3; i++) await project.api.patch(`/api/v1/tasks/${task.id}`, { title: `Renamed ${i}` }).expect(200);
      const historyCursor = (await project.api.get(`/api/v1/tasks/${task.id}/history?limit=1`).expect(200)).body.nextCursor;
      const res = await project.api.get(`/api/v1/tasks?cursor=${encodeURIComponent(historyCursor)}`).expect(400);
      expect(res.body.code).toBe('invalid_cursor');
    });

    it('rejects an unknown query parameter with 400 unknown_field', async () => {
      const res = await project.api.get('/api/v1/tasks?orderBy=title').expect(400);
      expect(res.body).toMatchObject({ code: 'unknown_field', errors: [{ field: 'orderBy' }] });
    });

    it('leaves trashed tasks out of the list and of total', async () => {
      const before = (await project.api.get('/api/v1/tasks?limit=1').expect(200)).body.total;
      const task = await createTask(project);
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      const res = await project.api.get('/api/v1/tasks?limit=100').expect(200);
      expect(ids(res)).not.toContain(task.id);
      expect(res.body.total).toBe(before);
    });
  });

  describe('filters', () => {
    let project: TestProject;
    let tasks: Record<string, TaskJson>;
    let sprintId: string;
    const query = async (q: string) => {
      const res = await project.api.get(`/api/v1/tasks?limit=100&${q}`).expect(200);
      return { ids: ids(res).sort(), total: res.body.total as number };
    };
    const expectMatches = async (q: string, names: string[]) => {
      const result = await query(q);
      expect(result.ids).toEqual(names.map((name) => tasks[name].id).sort());
      expect(result.total).toBe(names.length);
    };

    beforeAll(async () => {
      project = await createProject(t);
      const [ada, grace] = project.members.map((member) => member.membershipId);
      const [bug, feature] = project.labels.map((label) => label.id);
      sprintId = (await project.api.post('/api/v1/sprints', { name: 'Sprint' }).expect(201)).body.sprint.id;
      tasks = {};
      tasks.alpha = await createTask(project, {
        title: 'Alpha release',
        status: 'todo',
        priority: 'high',
        assigneeId: ada,
        labelIds: [bug],
        dueDate: '2027-01-10',
        sprintId,
      });
      tasks.beta = await createTask(project, {
        title: 'beta TESTING',
        status: 'in_progress',
        priority: 'low',
        assigneeId: grace,
        labelIds: [bug, feature],
        dueDate: '2027-01-20',
      });
      tasks.percent = await createTask(project, { title: '100% done_ish \\o/', status: 'done', priority: 'urgent', dueDate: '2027-01-31' });
      tasks.plain = await createTask(project, { title: '100 percent, done ish', status: 'backlog' });
      tasks.child = await createTask(project, { title: 'Child of alpha', parentId: tasks.alpha.id, status: 'todo', sprintId });
    });

    it('filters by a comma-separated list of statuses', async () => {
      await expectMatches('status=todo', ['alpha', 'child']);
      await expectMatches('status=todo,done', ['alpha', 'child', 'percent']);
    });

    it('filters by a comma-separated list of priorities', async () => {
      await expectMatches('priority=urgent,high', ['alpha', 'percent']);
    });

    it('rejects an empty or unknown status or priority with 400', async () => {
      for (const q of ['status=', 'status=todo,', 'status=open', 'priority=', 'priority=high,critical', 'status=todo&status=nope']) {
        const res = await project.api.get(`/api/v1/tasks?${q}`);
        expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
      }
    });

    it('filters by assignee, and by none for tasks without one; an unknown id matches nothing', async () => {
      await expectMatches(`assigneeId=${project.members[0].membershipId}`, ['alpha']);
      await expectMatches('assigneeId=none', ['percent', 'plain', 'child']);
      await expectMatches(`assigneeId=${NO_SUCH_ID}`, []);
      await expectMatches('assigneeId=not-an-id', []);
    });

    it('filters by sprint, and by none for tasks without one', async () => {
      await expectMatches(`sprintId=${sprintId}`, ['alpha', 'child']);
      await expectMatches('sprintId=none', ['beta', 'percent', 'plain']);
      await expectMatches(`sprintId=${NO_SUCH_ID}`, []);
    });

    it('filters by label and by parent', async () => {
      await expectMatches(`labelId=${project.labels[0].id}`, ['alpha', 'beta']);
      await expectMatches(`labelId=${project.labels[1].id}`, ['beta']);
      await expectMatches(`parentId=${tasks.alpha.id}`, ['child']);
      await expectMatches(`parentId=${NO_SUCH_ID}`, []);
    });

    it('searches titles case-insensitively, taking %, _ and \\ literally', async () => {
      await expectMatches('q=ALPHA', ['alpha', 'child']);
      await expectMatches('q=testing', ['beta']);
      await expectMatches(`q=${encodeURIComponent('100%')}`, ['percent']);
      await expectMatches(`q=${encodeURIComponent('done_ish')}`, ['percent']);
      await expectMatches(`q=${encodeURIComponent('\\o/')}`, ['percent']);
      await expectMatches(`q=${encodeURIComponent('%')}`, ['percent']);
      await expectMatches(`q=${encodeURIComponent('_')}`, ['percent']);
    });

    it('filters by due date window, inclusive, never matching tasks without a due date', async () => {
      await expectMatches('dueAfter=2027-01-20', ['beta', 'percent']);
      await expectMatches('dueBefore=2027-01-20', ['alpha', 'beta']);
      await expectMatches('dueAfter=2027-01-11&dueBefore=2027-01-30', ['beta']);
      await expectMatches('dueAfter=2000-01-01', ['alpha', 'beta', 'percent']);
    });

    it('rejects due dates that are not real calendar dates', async () => {
      for (const q of ['dueAfter=2027-02-30', 'dueBefore=2027-13-01', 'dueAfter=tomorrow', 'dueBefore=']) {
        const res = await project.api.get(`/api/v1/tasks?${q}`);
        expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
      }
    });

    it('filters by updatedSince, inclusive, with Z or an offset, and rejects other values', async () => {
      const updated = (await project.api.patch(`/api/v1/tasks/${tasks.plain.id}`, { priority: 'medium' }).expect(200)).body.task;
      await expectMatches(`updatedSince=${encodeURIComponent(updated.updatedAt)}`, ['plain']);
      const sameInstantWithOffset = new Date(updated.updatedAt).toISOString().replace('Z', '+00:00');
      await expectMatches(`updatedSince=${encodeURIComponent(sameInstantWithOffset)}`, ['plain']);
      await expectMatches('updatedSince=2000-01-01T00:00:00Z', Object.keys(tasks));
      for (const bad of ['yesterday', '2027-01-01', '2027-01-01T10:00:00', '2027-02-30T00:00:00Z']) {
        const res = await project.api.get(`/api/v1/tasks?updatedSince=${encodeURIComponent(bad)}`);
        expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
      }
    });

    it('combines filters with AND, and total counts every match across pages', async () => {
      await expectMatches(`status=todo,in_progress&labelId=${project.labels[0].id}&q=a`, ['alpha', 'beta']);
      const first = await project.api.get('/api/v1/tasks?limit=1&status=todo,in_progress,done').expect(200);
      expect(first.body.total).toBe(4);
      const second = await project.api
        .get(`/api/v1/tasks?limit=1&status=todo,in_progress,done&cursor=${encodeURIComponent(first.body.nextCursor)}`)
        .expect(200);
      expect(second.body.total).toBe(4);
    });
  });

  describe('blocked', () => {
    it('is true while a live, unfinished blocker exists, false once it is done, cancelled or trashed', async () => {
      const project = await createProject(t);
      const blocker = await createTask(project, { title: 'Blocker' });
      const task = await createTask(project, { title: 'Waits' });
      await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: blocker.id }).expect(201);
      const blockedInList = async () =>
        (await project.api.get('/api/v1/tasks').expect(200)).body.tasks.find((item: TaskJson) => item.id === task.id).blocked;
      expect(await blockedInList()).toBe(true);
      for (const [status, blocked] of [
        ['done', false],
        ['in_review', true],
        ['cancelled', false],
        ['todo', true],
      ] as const) {
        await project.api.patch(`/api/v1/tasks/${blocker.id}`, { status }).expect(200);
        expect(await blockedInList()).toBe(blocked);
      }
      await project.api.delete(`/api/v1/tasks/${blocker.id}`).expect(204);
      expect(await blockedInList()).toBe(false);
    });
  });

  describe('remembered pages and totals', () => {
    // Pages and totals are remembered per project version (src/tasks/task-list-cache.ts): each
    // list is read before every change, so a version the database failed to raise would show
    // here as a stale answer.
    it('stays exact when tasks change between two identical requests: create, edit, labels, trash, restore, purge, sprint deletion', async () => {
      const project = await createProject(t);
      const [bug] = project.labels;
      const sprintId = (await project.api.post('/api/v1/sprints', { name: 'S' }).expect(201)).body.sprint.id;
      const lists = {
        all: '/api/v1/tasks',
        todo: '/api/v1/tasks?status=todo',
        bug: `/api/v1/tasks?labelId=${bug.id}`,
        sprint: `/api/v1/tasks?sprintId=${sprintId}`,
        search: '/api/v1/tasks?q=needle',
        trash: '/api/v1/trash',
      };
      const totals = async () => {
        const result: Record<string, number> = {};
        for (const [name, url] of Object.entries(lists)) result[name] = (await project.api.get(url).expect(200)).body.total;
        return result;
      };
      const expectTotals = async (want: Record<keyof typeof lists, number>) => {
        expect(await totals()).toEqual(want);
        expect(await totals()).toEqual(want); // the remembered answer, same again
      };

      await expectTotals({ all: 0, todo: 0, bug: 0, sprint: 0, search: 0, trash: 0 });
      const parent = await createTask(project, { title: 'needle', status: 'todo', labelIds: [bug.id], sprintId });
      await expectTotals({ all: 1, todo: 1, bug: 1, sprint: 1, search: 1, trash: 0 });
      const child = await createTask(project, { title: 'hay', parentId: parent.id });
      await expectTotals({ all: 2, todo: 1, bug: 1, sprint: 1, search: 1, trash: 0 });
      await project.api.patch(`/api/v1/tasks/${child.id}`, { status: 'todo', title: 'a needle too' }).expect(200);
      await expectTotals({ all: 2, todo: 2, bug: 1, sprint: 1, search: 2, trash: 0 });
      await project.api.patch(`/api/v1/tasks/${child.id}`, { labelIds: [bug.id] }).expect(200);
      await expectTotals({ all: 2, todo: 2, bug: 2, sprint: 1, search: 2, trash: 0 });
      await project.api.patch(`/api/v1/tasks/${parent.id}`, { labelIds: [] }).expect(200);
      await expectTotals({ all: 2, todo: 2, bug: 1, sprint: 1, search: 2, trash: 0 });
      await project.api.delete(`/api/v1/tasks/${parent.id}`).expect(204);
      await expectTotals({ all: 0, todo: 0, bug: 0, sprint: 0, search: 0, trash: 2 });
      await project.api.post(`/api/v1/trash/${parent.id}/restore`).expect(200);
      await expectTotals({ all: 2, todo: 2, bug: 1, sprint: 1, search: 2, trash: 0 });
      await project.api.delete(`/api/v1/sprints/${sprintId}`).expect(204);
      await expectTotals({ all: 2, todo: 2, bug: 1, sprint: 0, search: 2, trash: 0 });
      await project.api.delete(`/api/v1/tasks/${parent.id}`).expect(204);
      await project.api.delete(`/api/v1/trash/${parent.id}`).expect(204);
      await expectTotals({ all: 0, todo: 0, bug: 0, sprint: 0, search: 0, trash: 0 });
    });

    it('shows at once what a remembered page shows of other rows: blocked, sprint name and status', async () => {
      const project = await createProject(t);
      const admin = asAdmin(t);
      const sprintId = (await project.api.post('/api/v1/sprints', { name: 'Before' }).expect(201)).body.sprint.id;
      const blocker = await createTask(project, { title: 'blocker' });
      const task = await createTask(project, { title: 'task', sprintId });
      const shown = async () => (await project.api.get('/api/v1/tasks').expect(200)).body.tasks.find((item: TaskJson) => item.id === task.id);

      expect(await shown()).toMatchObject({ blocked: false, sprint: { name: 'Before', status: 'planned' } });
      await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: blocker.id }).expect(201);
      expect((await shown()).blocked).toBe(true);
      await project.api.delete(`/api/v1/tasks/${task.id}/dependencies/${blocker.id}`).expect(204);
      expect((await shown()).blocked).toBe(false);
      await project.api.patch(`/api/v1/sprints/${sprintId}`, { name: 'After' }).expect(200);
      expect((await shown()).sprint).toEqual({ id: sprintId, name: 'After', status: 'planned' });
      await admin.post(`/admin/v1/sprints/${sprintId}/activate`).expect(200);
      expect((await shown()).sprint.status).toBe('active');
    });

    it('brings remembered totals up to date from the changes since: status in and out, assignee, trash, restore, purge, labels, sprint deleted, blocked', async () => {
      const project = await createProject(t);
      const [ada, grace] = project.members.map((member) => member.membershipId);
      const [bug] = project.labels;
      const sprintId = (await project.api.post('/api/v1/sprints', { name: 'S' }).expect(201)).body.sprint.id;
      const lists = {
        all: '/api/v1/tasks',
        todo: '/api/v1/tasks?status=todo',
        adaTodo: `/api/v1/tasks?status=todo,in_progress&assigneeId=${ada}`,
        sprint: `/api/v1/tasks?sprintId=${sprintId}`,
        noSprint: '/api/v1/tasks?sprintId=none',
        search: '/api/v1/tasks?q=needle&priority=high',
        bug: `/api/v1/tasks?labelId=${bug.id}`,
        trash: '/api/v1/trash',
      };
      const totals = async () => {
        const result: Record<string, number> = {};
        for (const [name, url] of Object.entries(lists)) result[name] = (await project.api.get(url).expect(200)).body.total;
        return result;
      };
      const tasks = [];
      for (let i = 0; i < 6; i++) {
        tasks.push(
          await createTask(project, { title: i % 2 ? 'hay' : 'needle', priority: 'high', status: 'todo', assigneeId: i < 3 ? ada : grace, sprintId }),
        );
      }
      const [a, b, c, d] = tasks;
      expect(await totals()).toEqual({ all: 6, todo: 6, adaTodo: 3, sprint: 6, noSprint: 0, search: 3, bug: 0, trash: 0 });
      await project.api.patch(`/api/v1/tasks/${a.id}`, { status: 'done' }).expect(200);
      expect(await totals()).toEqual({ all: 6, todo: 5, adaTodo: 2, sprint: 6, noSprint: 0, search: 3, bug: 0, trash: 0 });
      await project.api.patch(`/api/v1/tasks/${a.id}`, { status: 'in_progress' }).expect(200);
      expect(await totals()).toEqual({ all: 6, todo: 5, adaTodo: 3, sprint: 6, noSprint: 0, search: 3, bug: 0, trash: 0 });
      await project.api.patch(`/api/v1/tasks/${b.id}`, { assigneeId: grace, title: 'a needle', labelIds: [bug.id] }).expect(200);
      expect(await totals()).toEqual({ all: 6, todo: 5, adaTodo: 2, sprint: 6, noSprint: 0, search: 4, bug: 1, trash: 0 });
      await project.api.patch(`/api/v1/tasks/${b.id}`, { labelIds: [] }).expect(200);
      expect(await totals()).toEqual({ all: 6, todo: 5, adaTodo: 2, sprint: 6, noSprint: 0, search: 4, bug: 0, trash: 0 });
      await project.api.delete(`/api/v1/tasks/${c.id}`).expect(204);
      expect(await totals()).toEqual({ all: 5, todo: 4, adaTodo: 1, sprint: 5, noSprint: 0, search: 3, bug: 0, trash: 1 });
      await project.api.post(`/api/v1/trash/${c.id}/restore`).expect(200);
      expect(await totals()).toEqual({ all: 6, todo: 5, adaTodo: 2, sprint: 6, noSprint: 0, search: 4, bug: 0, trash: 0 });
      await project.api.post(`/api/v1/tasks/${d.id}/dependencies`, { blockedById: c.id }).expect(201);
      expect(await totals()).toEqual({ all: 6, todo: 5, adaTodo: 2, sprint: 6, noSprint: 0, search: 4, bug: 0, trash: 0 });
      await project.api.delete(`/api/v1/sprints/${sprintId}`).expect(204);
      expect(await totals()).toEqual({ all: 6, todo: 5, adaTodo: 2, sprint: 0, noSprint: 6, search: 4, bug: 0, trash: 0 });
      await project.api.delete(`/api/v1/tasks/${d.id}`).expect(204);
      await project.api.delete(`/api/v1/trash/${d.id}`).expect(204);
      expect(await totals()).toEqual({ all: 5, todo: 4, adaTodo: 2, sprint: 0, noSprint: 5, search: 4, bug: 0, trash: 0 });
    });

    it('adds the recorded changes to a remembered total instead of counting every task again, and counts again once they are gone', async () => {
      // White box: a row written with the triggers off leaves no delta, so only a recount sees it.
      const project = await createProject(t);
      await createTask(project, { status: 'todo' });
      const total = async () => (await project.api.get('/api/v1/tasks?status=todo').expect(200)).body.total;
      expect(await total()).toBe(1);
      await t.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe("SET LOCAL session_replication_role = 'replica'");
        await tx.$executeRaw`INSERT INTO tasks (project_id, title, status, rank) VALUES (${project.id}::uuid, 'unseen', 'todo', 'unseen')`;
      });
      await createTask(project, { status: 'todo' });
      expect(await total()).toBe(2);
      // Once the deltas since the remembered total are gone, the total is counted again.
      await createTask(project, { status: 'todo' });
      const { TaskListDeltas } = await import('../src/tasks/task-list-deltas.service');
      expect(await t.app.get(TaskListDeltas).prune(0)).toBeGreaterThanOrEqual(1);
      expect(await total()).toBe(4);
    });

    it('reads a page once for identical requests that arrive together after a change', async () => {
      const project = await createProject(t);
      for (let i = 0; i < 5; i++) await createTask(project);
      await project.api.get('/api/v1/tasks').expect(200);
      await createTask(project);
      let pageReads = 0;
      const stop = t.prisma.onStatement((statement) => {
        if (statement.includes('WITH shown AS MATERIALIZED')) pageReads++;
      });
      const answers = await Promise.all(Array.from({ length: 10 }, () => project.api.get('/api/v1/tasks').expect(200)));
      expect(new Set(answers.map((res) => res.text)).size).toBe(1);
      expect(answers[0].body.total).toBe(6);
      stop();
      expect(pageReads).toBe(1);
    });

    it("is not shared between projects: another project's changes leave this total alone", async () => {
      const [one, other] = [await createProject(t), await createProject(t)];
      await createTask(one);
      expect((await one.api.get('/api/v1/tasks').expect(200)).body.total).toBe(1);
      await createTask(other);
      await createTask(other);
      expect((await one.api.get('/api/v1/tasks').expect(200)).body.total).toBe(1);
      expect((await other.api.get('/api/v1/tasks').expect(200)).body.total).toBe(2);
    });

    it('raises the project version inside the writing transaction: a rolled-back write leaves it as it was', async () => {
      // The version must rise in the writing transaction itself, or a reader could pair a new
      // page with an old total. Read the raw rows: the task and the version change as one.
      const project = await createProject(t);
      const version = async () =>
        (await t.prisma.$queryRaw<{ version: bigint }[]>`SELECT version FROM task_list_versions WHERE project_id = ${project.id}::uuid`)[0]
          ?.version ?? 0n;
      const before = await version();
      await expect(
        t.prisma.$transaction(async (tx) => {
          await tx.$executeRaw`INSERT INTO tasks (project_id, title, rank) VALUES (${project.id}::uuid, 'rolled back', 'rolled-back')`;
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await version()).toBe(before);
      await createTask(project);
      expect(await version()).toBeGreaterThan(before);
    });
  });

  describe('cost', () => {
    it('runs the same number of SQL statements for a page of 1 and a page of 100', async () => {
      const project = await createProject(t);
      const [bug, feature] = project.labels.map((label) => label.id);
      const sprintId = (await project.api.post('/api/v1/sprints', { name: 'S' }).expect(201)).body.sprint.id;
      let previous: TaskJson | null = null;
      for (let i = 0; i < 110; i++) {
        const task: TaskJson = await createTask(project, {
          title: `Task ${i}`,
          labelIds: i % 2 ? [bug, feature] : [bug],
          assigneeId: project.members[i % 2].membershipId,
          sprintId,
        });
        if (previous && i % 3 === 0) await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: previous.id }).expect(201);
        previous = task;
      }
      let statements = 0;
      t.prisma.onStatement(() => statements++);
      const count = async (url: string) => {
        statements = 0;
        const res = await project.api.get(url).expect(200);
        return { statements, items: res.body.tasks.length };
      };
      await count('/api/v1/tasks?limit=2'); // the key's lastUsedAt is written on first use only
      // A page asked for the first time: the key lookup, the version of the project's tasks
      // (identical reads in flight at one version share one read), and the page itself.
      const one = await count('/api/v1/tasks?limit=1');
      const hundred = await count('/api/v1/tasks?limit=100');
      expect([one.items, hundred.items]).toEqual([1, 100]);
      expect(hundred.statements).toBe(one.statements);
      expect(one.statements).toBe(3);
      const filtered = await count(`/api/v1/tasks?limit=100&status=backlog&labelId=${feature}&q=task`);
      expect(filtered.statements).toBe(3);
      // Asked again, nothing changed: the key lookup and the version of the project's tasks.
      expect((await count('/api/v1/tasks?limit=100')).statements).toBe(2);
      // Asked again after a change: the key, the version, the page.
      await createTask(project);
      expect((await count('/api/v1/tasks?limit=1')).statements).toBe(3);
      expect((await count('/api/v1/tasks?limit=100')).statements).toBe(3);
    });
  });

  describe('cursor walk under concurrent inserts', () => {
    it('visits each of 300 tasks with the same createdAt exactly once while new tasks arrive', async () => {
      const project = await createProject(t);
      const createdAt = new Date('2026-06-01T12:00:00.000Z');
      const originals = Array.from({ length: 300 }, (_, i) => ({
        projectId: project.id,
        title: `Same instant ${i}`,
        createdAt,
        updatedAt: createdAt,
        rank: `rank-${String(i).padStart(3, '0')}`,
      }));
      await t.prisma.task.createMany({ data: originals });
      const originalIds = (await t.prisma.task.findMany({ where: { projectId: project.id }, select: { id: true } })).map((row) => row.id);

      let inserting = true;
      const inserter = (async () => {
        let n = 0;
        while (inserting) await createTask(project, { title: `Arrived during the walk ${n++}` });
        return n;
      })();
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      try {
        do {
          const url: string = `/api/v1/tasks?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const res = await project.api.get(url).expect(200);
          if (cursor) expect(res.body.tasks.length).toBeGreaterThan(0);
          seen.push(...ids(res));
          cursor = res.body.nextCursor;
          pages++;
        } while (cursor);
      } finally {
        inserting = false;
      }
      const arrived = await inserter;
      expect(arrived).toBeGreaterThan(0);
      const visitedOriginals = seen.filter((id) => originalIds.includes(id));
      expect(visitedOriginals.sort()).toEqual([...originalIds].sort());
      expect(new Set(seen).size).toBe(seen.length);
      expect(pages).toBeGreaterThanOrEqual(43);
    });
  });

  // adapter-pg sends instants without an offset: a server in another time zone would shift
  // cursors and updatedSince unless every session runs in UTC.
  (engine === 'postgresql' ? describe : describe.skip)('on a PostgreSQL server whose time zone is not UTC', () => {
    let far: TestApp;
    beforeAll(async () => {
      const database = await createTestDatabase();
      await database.alter(`ALTER DATABASE $database SET timezone TO 'Pacific/Chatham'`);
      far = await startTestApp({}, database);
    });
    afterAll(() => far?.close());

    it('walks the cursor over every task and filters updatedSince in UTC', async () => {
      const project = await createProject(far);
      const before = new Date(Date.now() - 60_000).toISOString();
      const created = [];
      for (let i = 0; i < 3; i++) created.push(await createTask(project, { title: `Far ${i}` }));
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/api/v1/tasks?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await project.api.get(url).expect(200);
        seen.push(...ids(res));
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(created.map((task) => task.id).reverse());
      const since = await project.api.get(`/api/v1/tasks?updatedSince=${before}`).expect(200);
      expect(since.body.total).toBe(3);
      await project.api.patch(`/api/v1/tasks/${created[0].id}`, { title: 'Renamed far away' }).expect(200);
      const history = await project.api.get(`/api/v1/tasks/${created[0].id}/history?limit=1`).expect(200);
      expect(Math.abs(Date.parse(history.body.history[0].createdAt) - Date.now())).toBeLessThan(60_000);
    });
  });
});
