import { createProject, createTask, NO_SUCH_ID, TaskJson, TestProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

// decisions.md section 18: estimates, the backlog order (rank), sort=rank and the moves.
describe('estimates and the backlog order (decisions.md section 18)', () => {
  const t = useTestApp();

  /** The project's live tasks in backlog order, page by page. */
  async function inOrder(project: TestProject): Promise<TaskJson[]> {
    const tasks: TaskJson[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: TaskJson = (
        await project.api.get(`/api/v1/tasks?sort=rank&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).expect(200)
      ).body;
      tasks.push(...page.tasks);
      cursor = page.nextCursor;
    }
    return tasks;
  }

  /** The project's live tasks in backlog order, by title. */
  const order = async (project: TestProject): Promise<string[]> => (await inOrder(project)).map((task) => task.title);

  async function tasksTitled(project: TestProject, titles: string[]): Promise<Record<string, TaskJson>> {
    const created = (await project.api.post('/api/v1/tasks/bulk', { tasks: titles.map((title) => ({ title })) }).expect(201)).body.tasks;
    return Object.fromEntries(created.map((task: TaskJson) => [task.title, task]));
  }

  const events = async (project: TestProject, after = 0) =>
    (await project.api.get(`/api/v1/events?after=${after}&limit=1000`).expect(200)).body.events;
  const lastSequence = async (project: TestProject) => (await events(project)).at(-1)?.sequence ?? 0;

  describe('estimate', () => {
    let project: TestProject;
    beforeAll(async () => {
      project = await createProject(t, 'Estimates');
    });

    it('takes 0, 0.5 and 1000 points, and null (the default): on create, bulk and PATCH', async () => {
      for (const estimate of [0, 0.5, 1000]) {
        const task = await createTask(project, { estimate });
        expect(task.estimate).toBe(estimate);
      }
      expect((await createTask(project)).estimate).toBeNull();
      const [bulk] = (await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'B', estimate: 13 }] }).expect(201)).body.tasks;
      expect(bulk.estimate).toBe(13);
      const patched = (await project.api.patch(`/api/v1/tasks/${bulk.id}`, { estimate: 2.5 }).expect(200)).body.task;
      expect(patched.estimate).toBe(2.5);
      expect((await project.api.patch(`/api/v1/tasks/${bulk.id}`, { estimate: null }).expect(200)).body.task.estimate).toBeNull();
    });

    it('refuses -1, 1000.5, 1.25 and "3" with 400 validation_failed naming estimate, on create, bulk and PATCH', async () => {
      const task = await createTask(project, { estimate: 5 });
      for (const estimate of [-1, 1000.5, 1.25, '3']) {
        const create = await project.api.post('/api/v1/tasks', { title: 'X', estimate }).expect(400);
        expect([estimate, create.body.code, create.body.errors[0].field]).toEqual([estimate, 'validation_failed', 'estimate']);
        const bulk = await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'X', estimate }] }).expect(400);
        expect(bulk.body.errors[0].field).toBe('tasks[0].estimate');
        await project.api.patch(`/api/v1/tasks/${task.id}`, { estimate }).expect(400);
      }
      expect((await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task.estimate).toBe(5);
    });

    it('is on every task answer: lists, detail, trash and events; its changes are in history and task.updated', async () => {
      const task = await createTask(project, { title: 'Shown everywhere', estimate: 3 });
      const list = (await project.api.get('/api/v1/tasks?limit=100').expect(200)).body.tasks;
      expect(list.find((item: TaskJson) => item.id === task.id).estimate).toBe(3);
      await project.api.patch(`/api/v1/tasks/${task.id}`, { estimate: 8 }).expect(200);
      const [updated] = (await events(project)).filter((event: TaskJson) => event.type === 'task.updated' && event.data.task.id === task.id);
      expect(updated.data.changes).toEqual([{ field: 'estimate', from: 3, to: 8 }]);
      const history = (await project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200)).body.history;
      expect(history[0].changes).toEqual([{ field: 'estimate', from: 3, to: 8 }]);
      expect(history[1].changes).toContainEqual({ field: 'estimate', from: null, to: 3 });
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      const trash = (await project.api.get('/api/v1/trash').expect(200)).body.tasks;
      expect(trash.find((item: TaskJson) => item.id === task.id).estimate).toBe(8);
    });

    it('filters with estimated=true|false, totals kept exact across estimate changes; anything else is 400', async () => {
      const other = await createProject(t, 'Estimated filter');
      const [a, b] = [await createTask(other, { estimate: 1 }), await createTask(other)];
      const totals = async () => [
        (await other.api.get('/api/v1/tasks?estimated=true').expect(200)).body.total,
        (await other.api.get('/api/v1/tasks?estimated=false').expect(200)).body.total,
      ];
      expect(await totals()).toEqual([1, 1]);
      await other.api.patch(`/api/v1/tasks/${b.id}`, { estimate: 0 }).expect(200);
      expect(await totals()).toEqual([2, 0]);
      await other.api.patch(`/api/v1/tasks/${a.id}`, { estimate: null }).expect(200);
      expect(await totals()).toEqual([1, 1]);
      const ids = (await other.api.get('/api/v1/tasks?estimated=true').expect(200)).body.tasks.map((task: TaskJson) => task.id);
      expect(ids).toEqual([b.id]);
      const bad = await other.api.get('/api/v1/tasks?estimated=yes').expect(400);
      expect(bad.body.errors[0].field).toBe('estimated');
    });
  });

  describe('rank', () => {
    it('puts each new task at the bottom, a bulk create in the order sent; ranks are opaque ASCII of at most 64 characters', async () => {
      const project = await createProject(t, 'Ranks');
      await createTask(project, { title: 'first' });
      await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'second' }, { title: 'third' }] }).expect(201);
      await createTask(project, { title: 'fourth' });
      expect(await order(project)).toEqual(['first', 'second', 'third', 'fourth']);
      const tasks = (await project.api.get('/api/v1/tasks?sort=rank').expect(200)).body.tasks;
      for (const task of tasks) expect(task.rank).toMatch(/^[!-~]{1,64}$/);
      const ranks = tasks.map((task: TaskJson) => task.rank);
      expect([...ranks].sort((x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y)))).toEqual(ranks);
    });

    it('is read-only: 400 read_only_field when a create or a PATCH sends it, even as null', async () => {
      const project = await createProject(t, 'Read-only rank');
      const task = await createTask(project);
      for (const rank of ['0', null]) {
        const create = await project.api.post('/api/v1/tasks', { title: 'X', rank }).expect(400);
        expect(create.body).toMatchObject({ code: 'read_only_field', errors: [{ field: 'rank' }] });
        const patch = await project.api.patch(`/api/v1/tasks/${task.id}`, { rank }).expect(400);
        expect(patch.body).toMatchObject({ code: 'read_only_field', errors: [{ field: 'rank' }] });
      }
    });

    it('lists in backlog order with sort=rank, top first, page by page with a keyset cursor and every filter; sort=created stays the default', async () => {
      const project = await createProject(t, 'Sorted');
      const titles = Array.from({ length: 9 }, (_, i) => `T${i}`);
      const tasks = await tasksTitled(project, titles);
      for (const title of ['T2', 'T5', 'T8']) await project.api.patch(`/api/v1/tasks/${tasks[title].id}`, { status: 'todo' }).expect(200);
      await project.api.post(`/api/v1/tasks/${tasks.T8.id}/move`, { to: 'top' }).expect(200);
      expect(await order(project)).toEqual(['T8', 'T0', 'T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7']);
      const seen: string[] = [];
      const totals: number[] = [];
      for (let cursor: string | null = null, first = true; first || cursor; first = false) {
        const page: TaskJson = (
          await project.api.get(`/api/v1/tasks?sort=rank&status=todo&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).expect(200)
        ).body;
        seen.push(...page.tasks.map((task: TaskJson) => task.title));
        totals.push(page.total);
        cursor = page.nextCursor;
      }
      expect(seen).toEqual(['T8', 'T2', 'T5']);
      expect(totals).toEqual([3, 3]);
      const ids = async (query: string) => (await project.api.get(`/api/v1/tasks?${query}`).expect(200)).body.tasks.map((task: TaskJson) => task.id);
      expect(await ids('')).toEqual(await ids('sort=created'));
      expect(await ids('sort=created')).not.toEqual(await ids('sort=rank'));
      expect((await project.api.get('/api/v1/tasks?sort=title').expect(400)).body.errors[0].field).toBe('sort');
      const createdCursor = (await project.api.get('/api/v1/tasks?limit=1').expect(200)).body.nextCursor;
      const mixed = await project.api.get(`/api/v1/tasks?sort=rank&cursor=${encodeURIComponent(createdCursor)}`).expect(400);
      expect(mixed.body.code).toBe('invalid_cursor');
    });

    it('keeps a task’s place through the trash: restored, it comes back where it was', async () => {
      const project = await createProject(t, 'Rank through the trash');
      const tasks = await tasksTitled(project, ['a', 'b', 'c']);
      await project.api.delete(`/api/v1/tasks/${tasks.b.id}`).expect(204);
      expect(await order(project)).toEqual(['a', 'c']);
      await project.api.post(`/api/v1/trash/${tasks.b.id}/restore`).expect(200);
      expect(await order(project)).toEqual(['a', 'b', 'c']);
    });
  });

  describe('POST /api/v1/tasks/{taskId}/move', () => {
    it('places a task before or after another, at the top or the bottom, answering it with its new rank', async () => {
      const project = await createProject(t, 'Moves');
      const tasks = await tasksTitled(project, ['a', 'b', 'c', 'd']);
      const moved = (await project.api.post(`/api/v1/tasks/${tasks.d.id}/move`, { before: tasks.b.id }).expect(200)).body.task;
      expect(moved.rank).not.toBe(tasks.d.rank);
      expect(moved).toEqual((await project.api.get(`/api/v1/tasks/${tasks.d.id}`).expect(200)).body.task);
      expect(await order(project)).toEqual(['a', 'd', 'b', 'c']);
      await project.api.post(`/api/v1/tasks/${tasks.a.id}/move`, { after: tasks.c.id }).expect(200);
      expect(await order(project)).toEqual(['d', 'b', 'c', 'a']);
      await project.api.post(`/api/v1/tasks/${tasks.c.id}/move`, { to: 'top' }).expect(200);
      expect(await order(project)).toEqual(['c', 'd', 'b', 'a']);
      await project.api.post(`/api/v1/tasks/${tasks.c.id}/move`, { to: 'bottom' }).expect(200);
      expect(await order(project)).toEqual(['d', 'b', 'a', 'c']);
      // A task created afterwards still goes below the one moved to the bottom.
      await createTask(project, { title: 'e' });
      expect(await order(project)).toEqual(['d', 'b', 'a', 'c', 'e']);
    });

    it('records the move as a change of rank in history and as task.updated; a move to where it stands records nothing', async () => {
      const project = await createProject(t, 'Move records');
      const tasks = await tasksTitled(project, ['a', 'b']);
      const after = await lastSequence(project);
      const moved = (await project.api.post(`/api/v1/tasks/${tasks.b.id}/move`, { to: 'top' }).expect(200)).body.task;
      const [event] = await events(project, after);
      expect(event).toMatchObject({ type: 'task.updated', data: { task: moved, changes: [{ field: 'rank', from: tasks.b.rank, to: moved.rank }] } });
      const history = (await project.api.get(`/api/v1/tasks/${tasks.b.id}/history`).expect(200)).body.history;
      expect(history[0]).toMatchObject({ action: 'updated', changes: [{ field: 'rank', from: tasks.b.rank, to: moved.rank }] });
      expect(moved.updatedAt > tasks.b.updatedAt).toBe(true);
      const again = (await project.api.post(`/api/v1/tasks/${tasks.b.id}/move`, { before: tasks.a.id }).expect(200)).body.task;
      expect(again).toEqual(moved);
      expect(await events(project, event.sequence)).toEqual([]);
    });

    it('answers 400 for none or several places, or the task itself; 404 for a task or place not live in the project', async () => {
      const project = await createProject(t, 'Move errors');
      const other = await createProject(t, 'Move errors, other');
      const tasks = await tasksTitled(project, ['a', 'b', 'trashed']);
      const theirs = await createTask(other);
      await project.api.delete(`/api/v1/tasks/${tasks.trashed.id}`).expect(204);
      const move = (taskId: string, body: object) => project.api.post(`/api/v1/tasks/${taskId}/move`, body);
      for (const body of [{}, { before: tasks.b.id, to: 'top' }, { before: tasks.a.id }, { to: 'middle' }, { before: tasks.b.id, rank: 'x' }]) {
        expect((await move(tasks.a.id, body).expect(400)).body.code).toMatch(/validation_failed|unknown_field/);
      }
      for (const [taskId, body] of [
        [tasks.a.id, { before: theirs.id }],
        [tasks.a.id, { after: tasks.trashed.id }],
        [tasks.a.id, { before: NO_SUCH_ID }],
        [tasks.trashed.id, { to: 'top' }],
        [theirs.id, { to: 'top' }],
        ['nope', { to: 'top' }],
      ] as [string, object][]) {
        expect((await move(taskId, body).expect(404)).body.code).toBe('not_found');
      }
      expect(await order(project)).toEqual(['a', 'b']);
    });

    it('answers null as before, after or to 400 validation_failed naming it, single and bulk, alone or beside a real place: no event, no rank changes', async () => {
      const project = await createProject(t, 'Null places');
      const tasks = await tasksTitled(project, ['a', 'b', 'c']);
      const ranks = async () => (await inOrder(project)).map((task) => [task.title, task.rank]);
      const [before, sequence] = [await ranks(), await lastSequence(project)];
      for (const place of ['before', 'after', 'to']) {
        for (const [path, body] of [
          [`/api/v1/tasks/${tasks.c.id}/move`, { [place]: null }],
          [`/api/v1/tasks/${tasks.c.id}/move`, { [place]: null, ...(place === 'to' ? { before: tasks.a.id } : { to: 'top' }) }],
          ['/api/v1/tasks/move', { taskIds: [tasks.c.id, tasks.b.id], [place]: null }],
          ['/api/v1/tasks/move', { taskIds: [tasks.c.id], [place]: null, ...(place === 'to' ? { after: tasks.a.id } : { to: 'bottom' }) }],
        ] as [string, object][]) {
          const res = await project.api.post(path, body).expect(400);
          expect([res.body.code, res.body.errors.map((error: { field: string }) => error.field)]).toEqual(['validation_failed', [place]]);
        }
      }
      expect(await ranks()).toEqual(before);
      expect(await lastSequence(project)).toBe(sequence);
    });

    it('honours If-Match (412 with the current ETag) and Idempotency-Key (a retry gets the same answer, moved once)', async () => {
      const project = await createProject(t, 'Move preconditions');
      const tasks = await tasksTitled(project, ['a', 'b', 'c']);
      const stale = await project.api.post(`/api/v1/tasks/${tasks.c.id}/move`, { to: 'top' }).set('If-Match', '"stale"').expect(412);
      expect(stale.headers.etag).toBeDefined();
      const current = (await project.api.get(`/api/v1/tasks/${tasks.c.id}`).expect(200)).headers.etag;
      await project.api.post(`/api/v1/tasks/${tasks.c.id}/move`, { to: 'top' }).set('If-Match', current).expect(200);
      expect(await order(project)).toEqual(['c', 'a', 'b']);
      const first = await project.api.post(`/api/v1/tasks/${tasks.a.id}/move`, { to: 'bottom' }).set('Idempotency-Key', 'move-a').expect(200);
      await project.api.post(`/api/v1/tasks/${tasks.b.id}/move`, { to: 'bottom' }).expect(200);
      const retry = await project.api.post(`/api/v1/tasks/${tasks.a.id}/move`, { to: 'bottom' }).set('Idempotency-Key', 'move-a').expect(200);
      expect([retry.text, retry.headers['idempotent-replayed']]).toEqual([first.text, 'true']);
      expect(await order(project)).toEqual(['c', 'a', 'b']);
    });

    it('rebalances when a gap runs out: 100 moves into one gap keep the order, and each task whose rank is rewritten gets task.updated', async () => {
      const project = await createProject(t, 'Rebalance');
      const titles = Array.from({ length: 102 }, (_, i) => `m${String(i).padStart(3, '0')}`);
      const tasks = { ...(await tasksTitled(project, titles.slice(0, 51))), ...(await tasksTitled(project, titles.slice(51))) };
      const after = await lastSequence(project);
      // Each task in turn goes right after m000: always into the gap between m000 and the last one moved.
      const expected = ['m000'];
      for (const title of titles.slice(1, 101)) {
        await project.api.post(`/api/v1/tasks/${tasks[title].id}/move`, { after: tasks.m000.id }).expect(200);
        expected.splice(1, 0, title);
      }
      expected.push('m101');
      expect(await order(project)).toEqual(expected);
      // Beyond the 100 moves' own events, one task.updated per task a rebalance rewrote: a mirror
      // that applies every event's rank ends with the ranks the list shows.
      const changes = await events(project, after);
      expect(changes.every((event: TaskJson) => event.type === 'task.updated' && event.data.changes[0].field === 'rank')).toBe(true);
      expect(changes.length).toBeGreaterThan(100);
      const mirror = new Map<string, string>(Object.values(tasks).map((task) => [task.id, task.rank]));
      for (const event of changes) {
        expect(event.data.changes[0].from).toBe(mirror.get(event.data.task.id));
        mirror.set(event.data.task.id, event.data.changes[0].to);
      }
      const final = await inOrder(project);
      for (const task of final) expect([task.title, mirror.get(task.id)]).toEqual([task.title, task.rank]);
      for (const task of final) expect(task.rank.length).toBeLessThanOrEqual(64);
    });
  });

  describe('POST /api/v1/tasks/move', () => {
    it('makes the tasks contiguous at the place, in the order given, and answers them in that order', async () => {
      const project = await createProject(t, 'Bulk moves');
      const tasks = await tasksTitled(project, ['a', 'b', 'c', 'd', 'e']);
      const res = await project.api.post('/api/v1/tasks/move', { taskIds: [tasks.e.id, tasks.a.id, tasks.c.id], before: tasks.b.id }).expect(200);
      expect(res.body.tasks.map((task: TaskJson) => task.title)).toEqual(['e', 'a', 'c']);
      expect(await order(project)).toEqual(['e', 'a', 'c', 'b', 'd']);
      await project.api.post('/api/v1/tasks/move', { taskIds: [tasks.b.id, tasks.e.id], to: 'bottom' }).expect(200);
      expect(await order(project)).toEqual(['a', 'c', 'd', 'b', 'e']);
      await project.api.post('/api/v1/tasks/move', { taskIds: [tasks.d.id, tasks.b.id], after: tasks.a.id }).expect(200);
      expect(await order(project)).toEqual(['a', 'd', 'b', 'c', 'e']);
    });

    it('answers every task of the move in full, those that keep their rank too, with task.updated only for those that moved', async () => {
      const project = await createProject(t, 'Bulk move keeping a rank');
      const tasks = await tasksTitled(project, ['a', 'b', 'c']);
      await project.api.post(`/api/v1/tasks/${tasks.b.id}/move`, { before: tasks.a.id }).expect(200);
      const after = await lastSequence(project);
      const b = (await project.api.get(`/api/v1/tasks/${tasks.b.id}`).expect(200)).body.task;
      // b already stands at the top: only c moves, above it.
      const res = await project.api.post('/api/v1/tasks/move', { taskIds: [tasks.c.id, tasks.b.id], to: 'top' }).expect(200);
      expect(res.body.tasks.map((task: TaskJson) => task.title)).toEqual(['c', 'b']);
      expect(res.body.tasks[1]).toEqual(b);
      expect(await order(project)).toEqual(['c', 'b', 'a']);
      expect((await events(project, after)).map((event: TaskJson) => event.data.task.title)).toEqual(['c']);
    });

    it('is all or nothing: one task that is not live in the project is 404 and nothing moves; a task twice, or the place among them, is 400', async () => {
      const project = await createProject(t, 'Bulk move errors');
      const tasks = await tasksTitled(project, ['a', 'b', 'c']);
      await project.api.post('/api/v1/tasks/move', { taskIds: [tasks.c.id, NO_SUCH_ID], to: 'top' }).expect(404);
      await project.api.post('/api/v1/tasks/move', { taskIds: [tasks.c.id, tasks.c.id], to: 'top' }).expect(400);
      await project.api.post('/api/v1/tasks/move', { taskIds: [tasks.c.id, tasks.a.id], before: tasks.a.id }).expect(400);
      await project.api.post('/api/v1/tasks/move', { taskIds: [], to: 'top' }).expect(400);
      await project.api.post('/api/v1/tasks/move', { taskIds: Array.from({ length: 101 }, () => tasks.a.id), to: 'top' }).expect(400);
      expect(await order(project)).toEqual(['a', 'b', 'c']);
    });

    it('never gives two tasks one rank: 20 moves at once', async () => {
      const project = await createProject(t, 'Concurrent moves');
      const titles = Array.from({ length: 20 }, (_, i) => `c${i}`);
      const tasks = await tasksTitled(project, titles);
      const answers = await Promise.all(
        titles.map((title, i) =>
          project.api.post(
            `/api/v1/tasks/${tasks[title].id}/move`,
            i % 3 === 0 ? { to: 'top' } : i % 3 === 1 ? { after: tasks.c0.id } : { before: tasks.c19.id },
          ),
        ),
      );
      expect(answers.map((res) => res.status).filter((status) => status !== 200)).toEqual([]);
      const ranks = (await project.api.get('/api/v1/tasks?sort=rank&limit=100').expect(200)).body.tasks.map((task: TaskJson) => task.rank);
      expect(ranks).toHaveLength(20);
      expect(new Set(ranks).size).toBe(20);
    });
  });
});
