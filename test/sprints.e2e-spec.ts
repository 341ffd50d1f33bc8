import { asAdmin, createProject, createTask, ISO_TIMESTAMP, NO_SUCH_ID, TestProject, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

describe('sprints', () => {
  const t = useTestApp();
  const project = useProject(t);

  const createSprint = async (p: TestProject, body: Record<string, unknown> = {}) =>
    (await p.api.post('/api/v1/sprints', { name: 'Sprint', ...body }).expect(201)).body.sprint;
  const activate = (id: string) => asAdmin(t).post(`/admin/v1/sprints/${id}/activate`);
  const close = (id: string, body?: object) => asAdmin(t).post(`/admin/v1/sprints/${id}/close`, body);

  describe('POST /api/v1/sprints', () => {
    it('creates a planned sprint and answers 201 {sprint}', async () => {
      const res = await project.api
        .post('/api/v1/sprints', { name: 'Sprint 1', goal: 'Ship it', startDate: '2027-01-04', endDate: '2027-01-15' })
        .expect(201);
      expect(res.body).toEqual({
        sprint: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          name: 'Sprint 1',
          goal: 'Ship it',
          status: 'planned',
          startDate: '2027-01-04',
          endDate: '2027-01-15',
          createdAt: expect.stringMatching(ISO_TIMESTAMP),
        },
      });
    });

    it('answers 400 read_only_field when status is sent, whatever its value', async () => {
      for (const status of ['planned', 'active', 'closed']) {
        const res = await project.api.post('/api/v1/sprints', { name: 'S', status }).expect(400);
        expect(res.body).toMatchObject({ code: 'read_only_field', errors: [{ field: 'status' }] });
      }
    });

    it('counts name and goal in code points: 1 to 100, and up to 1000', async () => {
      await createSprint(project, { name: '🚀'.repeat(100), goal: 'ü'.repeat(1000) });
      for (const body of [{ name: '🚀'.repeat(101) }, { name: '' }, { name: '  ' }, { name: 'S', goal: 'ü'.repeat(1001) }]) {
        const res = await project.api.post('/api/v1/sprints', body);
        expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
      }
    });

    it('answers 400 invalid_date_window when endDate is before startDate; equal days are fine', async () => {
      const res = await project.api.post('/api/v1/sprints', { name: 'S', startDate: '2027-02-10', endDate: '2027-02-09' }).expect(400);
      expect(res.body.code).toBe('invalid_date_window');
      await createSprint(project, { startDate: '2027-02-10', endDate: '2027-02-10' });
      await createSprint(project, { endDate: '2027-02-10' });
    });

    it('rejects dates that are not real calendar days, and unknown fields', async () => {
      const bad = await project.api.post('/api/v1/sprints', { name: 'S', startDate: '2027-02-29' }).expect(400);
      expect(bad.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'startDate' }] });
      const unknown = await project.api.post('/api/v1/sprints', { name: 'S', velocity: 3 }).expect(400);
      expect(unknown.body.code).toBe('unknown_field');
    });

    it('keeps dates of the first century AD as they were written', async () => {
      const res = await project.api.post('/api/v1/sprints', { name: 'Old', startDate: '0050-01-01', endDate: '0099-12-31' }).expect(201);
      expect(res.body.sprint).toMatchObject({ startDate: '0050-01-01', endDate: '0099-12-31' });
      const read = await project.api.get(`/api/v1/sprints/${res.body.sprint.id}`).expect(200);
      expect(read.body.sprint).toMatchObject({ startDate: '0050-01-01', endDate: '0099-12-31' });
    });
  });

  describe('GET', () => {
    it("lists the project's sprints only, newest first", async () => {
      const mine = await createProject(t, 'Sprint list');
      const other = await createProject(t, 'Other');
      const created = [await createSprint(mine, { name: 'A' }), await createSprint(mine, { name: 'B' }), await createSprint(mine, { name: 'C' })];
      await createSprint(other, { name: 'Theirs' });
      const res = await mine.api.get('/api/v1/sprints').expect(200);
      expect(res.body).toEqual({ sprints: [...created].reverse() });
    });

    it("answers one sprint as {sprint}, and 404 for another project's or an unknown one", async () => {
      const sprint = await createSprint(project, { name: 'One' });
      expect((await project.api.get(`/api/v1/sprints/${sprint.id}`).expect(200)).body).toEqual({ sprint });
      const other = await createProject(t, 'Other');
      for (const id of [sprint.id, NO_SUCH_ID, 'x']) {
        const res = await other.api.get(`/api/v1/sprints/${id}`);
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
    });
  });

  describe('PATCH /api/v1/sprints/{sprintId}', () => {
    it('changes only the fields sent; null clears goal and dates', async () => {
      const sprint = await createSprint(project, { name: 'Before', goal: 'g', startDate: '2027-03-01', endDate: '2027-03-10' });
      const renamed = (await project.api.patch(`/api/v1/sprints/${sprint.id}`, { name: 'After' }).expect(200)).body.sprint;
      expect(renamed).toEqual({ ...sprint, name: 'After' });
      const cleared = (await project.api.patch(`/api/v1/sprints/${sprint.id}`, { goal: null, startDate: null, endDate: null }).expect(200)).body
        .sprint;
      expect(cleared).toMatchObject({ goal: null, startDate: null, endDate: null });
    });

    it('checks the window on the resulting values, also when only one end moves', async () => {
      const sprint = await createSprint(project, { startDate: '2027-03-01', endDate: '2027-03-10' });
      const early = await project.api.patch(`/api/v1/sprints/${sprint.id}`, { endDate: '2027-02-28' }).expect(400);
      expect(early.body.code).toBe('invalid_date_window');
      const late = await project.api.patch(`/api/v1/sprints/${sprint.id}`, { startDate: '2027-03-11' }).expect(400);
      expect(late.body.code).toBe('invalid_date_window');
      expect((await project.api.get(`/api/v1/sprints/${sprint.id}`)).body.sprint).toMatchObject({ startDate: '2027-03-01', endDate: '2027-03-10' });
      await project.api.patch(`/api/v1/sprints/${sprint.id}`, { startDate: '2027-03-10' }).expect(200);
    });

    it('answers 400 to an empty body, to status, to a null name and to unknown fields', async () => {
      const sprint = await createSprint(project);
      expect((await project.api.patch(`/api/v1/sprints/${sprint.id}`, {}).expect(400)).body.code).toBe('empty_body');
      expect((await project.api.patch(`/api/v1/sprints/${sprint.id}`, { status: 'active' }).expect(400)).body.code).toBe('read_only_field');
      expect((await project.api.patch(`/api/v1/sprints/${sprint.id}`, { name: null }).expect(400)).body.code).toBe('validation_failed');
      expect((await project.api.patch(`/api/v1/sprints/${sprint.id}`, { owner: 'x' }).expect(400)).body.code).toBe('unknown_field');
      expect((await project.api.get(`/api/v1/sprints/${sprint.id}`)).body.sprint.status).toBe('planned');
    });

    it("answers 404 for another project's sprint", async () => {
      const other = await createProject(t, 'Other');
      const theirs = await createSprint(other);
      await project.api.patch(`/api/v1/sprints/${theirs.id}`, { name: 'Mine now' }).expect(404);
      expect((await other.api.get(`/api/v1/sprints/${theirs.id}`)).body.sprint.name).toBe('Sprint');
    });
  });

  describe('DELETE /api/v1/sprints/{sprintId}', () => {
    it('deletes the sprint; its tasks survive without a sprint, status unchanged, each change in history', async () => {
      const sprint = await createSprint(project);
      const tasks = [
        await createTask(project, { sprintId: sprint.id, status: 'in_progress' }),
        await createTask(project, { sprintId: sprint.id, status: 'done' }),
      ];
      await project.api.delete(`/api/v1/sprints/${sprint.id}`).expect(204);
      await project.api.get(`/api/v1/sprints/${sprint.id}`).expect(404);
      for (const task of tasks) {
        const now = (await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task;
        expect(now).toMatchObject({ sprint: null, status: task.status });
        const [latest] = (await project.api.get(`/api/v1/tasks/${task.id}/history`)).body.history;
        expect(latest).toMatchObject({ action: 'updated', actor: 'Test key (API)', changes: [{ field: 'sprintId', from: sprint.id, to: null }] });
      }
      await project.api.delete(`/api/v1/sprints/${sprint.id}`).expect(404);
    });

    it('deletes active and closed sprints too', async () => {
      const own = await createProject(t, 'Deletions');
      const active = await createSprint(own);
      await activate(active.id).expect(200);
      await own.api.delete(`/api/v1/sprints/${active.id}`).expect(204);
      const closed = await createSprint(own);
      await activate(closed.id).expect(200);
      await close(closed.id).expect(200);
      await own.api.delete(`/api/v1/sprints/${closed.id}`).expect(204);
    });
  });

  describe('activation and closing (admin interface)', () => {
    it('activates a planned sprint, and refuses a second active sprint with 409', async () => {
      const own = await createProject(t, 'Activation');
      const [first, second] = [await createSprint(own), await createSprint(own)];
      const res = await activate(first.id).expect(200);
      expect(res.body.sprint).toMatchObject({ id: first.id, status: 'active' });
      expect((await activate(second.id).expect(409)).body.code).toBe('conflict');
      expect((await activate(first.id).expect(409)).body.code).toBe('conflict');
      await activate(NO_SUCH_ID).expect(404);
      const task = await createTask(own, { sprintId: first.id });
      expect(task.sprint).toEqual({ id: first.id, name: 'Sprint', status: 'active' });
    });

    it('lets exactly one of two simultaneous activations in one project win', async () => {
      for (let round = 0; round < 5; round++) {
        const own = await createProject(t, `Race ${round}`);
        const [a, b] = [await createSprint(own), await createSprint(own)];
        const results = await Promise.all([activate(a.id), activate(b.id)]);
        expect(results.map((res) => res.status).sort()).toEqual([200, 409]);
        expect(await t.prisma.sprint.count({ where: { projectId: own.id, status: 'active' } })).toBe(1);
      }
    });

    it('closes the active sprint: done and cancelled tasks stay, open ones move to the planned sprint named, by App', async () => {
      const own = await createProject(t, 'Closing');
      const [current, next] = [await createSprint(own, { name: 'Current' }), await createSprint(own, { name: 'Next' })];
      await activate(current.id).expect(200);
      const done = await createTask(own, { sprintId: current.id, status: 'done' });
      const cancelled = await createTask(own, { sprintId: current.id, status: 'cancelled' });
      const open = await createTask(own, { sprintId: current.id, status: 'in_progress' });
      const res = await close(current.id, { moveOpenTasksTo: next.id }).expect(200);
      expect(res.body.sprint).toMatchObject({ id: current.id, status: 'closed' });
      for (const task of [done, cancelled]) {
        expect((await own.api.get(`/api/v1/tasks/${task.id}`)).body.task.sprint).toEqual({ id: current.id, name: 'Current', status: 'closed' });
      }
      expect((await own.api.get(`/api/v1/tasks/${open.id}`)).body.task.sprint).toEqual({ id: next.id, name: 'Next', status: 'planned' });
      const [latest] = (await own.api.get(`/api/v1/tasks/${open.id}/history`)).body.history;
      expect(latest).toMatchObject({ actor: 'App', action: 'updated', changes: [{ field: 'sprintId', from: current.id, to: next.id }] });
    });

    it('moves open tasks to no sprint when moveOpenTasksTo is null or absent', async () => {
      const own = await createProject(t, 'Closing to backlog');
      for (const body of [undefined, { moveOpenTasksTo: null }]) {
        const sprint = await createSprint(own);
        await activate(sprint.id).expect(200);
        const open = await createTask(own, { sprintId: sprint.id });
        await close(sprint.id, body).expect(200);
        expect((await own.api.get(`/api/v1/tasks/${open.id}`)).body.task.sprint).toBeNull();
      }
    });

    it('refuses to close a sprint that is not active, or to move tasks to a sprint that is not planned', async () => {
      const own = await createProject(t, 'Close rules');
      const planned = await createSprint(own);
      expect((await close(planned.id).expect(409)).body.code).toBe('conflict');
      const active = await createSprint(own);
      await activate(active.id).expect(200);
      expect((await close(active.id, { moveOpenTasksTo: active.id }).expect(409)).body.code).toBe('conflict');
      const other = await createProject(t, 'Elsewhere');
      const theirs = await createSprint(other);
      await close(active.id, { moveOpenTasksTo: theirs.id }).expect(404);
      expect((await own.api.get(`/api/v1/sprints/${active.id}`)).body.sprint.status).toBe('active');
      await close(active.id).expect(200);
      expect((await close(active.id).expect(409)).body.code).toBe('conflict');
    });

    it('answers an unknown moveOpenTasksTo (404) before a sprint that cannot close (409)', async () => {
      const own = await createProject(t, 'Close order');
      const planned = await createSprint(own);
      expect((await close(planned.id, { moveOpenTasksTo: NO_SUCH_ID }).expect(404)).body.code).toBe('not_found');
    });

    it('makes a closed sprint accept no task: 404 from create and update', async () => {
      const own = await createProject(t, 'Closed sprint');
      const sprint = await createSprint(own);
      await activate(sprint.id).expect(200);
      await close(sprint.id).expect(200);
      const created = await own.api.post('/api/v1/tasks', { title: 'T', sprintId: sprint.id }).expect(404);
      expect(created.body.code).toBe('not_found');
      const task = await createTask(own);
      await own.api.patch(`/api/v1/tasks/${task.id}`, { sprintId: sprint.id }).expect(404);
      expect((await own.api.get(`/api/v1/tasks/${task.id}`)).body.task.sprint).toBeNull();
    });

    it('takes a task reopened in a closed sprint out of it (history, event, answer); the closed sprint’s report does not change', async () => {
      const own = await createProject(t, 'Reopened after the close');
      const [sprint, next] = [await createSprint(own, { name: 'Closed' }), await createSprint(own, { name: 'Next' })];
      await activate(sprint.id).expect(200);
      const [done, cancelled, kept, renamed, moved] = (
        await own.api
          .post('/api/v1/tasks/bulk', {
            tasks: [
              { title: 'Done', status: 'done', sprintId: sprint.id, estimate: 3 },
              { title: 'Cancelled', status: 'cancelled', sprintId: sprint.id },
              { title: 'Done, then cancelled', status: 'done', sprintId: sprint.id },
              { title: 'Done, then renamed', status: 'done', sprintId: sprint.id },
              { title: 'Done, then reopened into the next sprint', status: 'done', sprintId: sprint.id },
            ],
          })
          .expect(201)
      ).body.tasks;
      await close(sprint.id).expect(200);
      const report = (await own.api.get(`/api/v1/sprints/${sprint.id}/report`).expect(200)).text;
      const { nextAfter } = (await own.api.get('/api/v1/events?limit=1000').expect(200)).body;

      const reopened = (await own.api.patch(`/api/v1/tasks/${done.id}`, { status: 'in_progress' }).expect(200)).body.task;
      expect(reopened).toMatchObject({ status: 'in_progress', sprint: null, completedAt: null });
      const [entry] = (await own.api.get(`/api/v1/tasks/${done.id}/history`).expect(200)).body.history;
      const changes = [
        { field: 'status', from: 'done', to: 'in_progress' },
        { field: 'sprintId', from: sprint.id, to: null },
      ];
      expect(entry).toMatchObject({ action: 'updated', actor: 'Test key (API)', changes });
      const uncancelled = (await own.api.patch(`/api/v1/tasks/${cancelled.id}`, { status: 'todo', priority: 'high' }).expect(200)).body.task;
      expect(uncancelled).toMatchObject({ status: 'todo', priority: 'high', sprint: null });
      const [event] = (await own.api.get(`/api/v1/events?after=${nextAfter}&limit=1000`).expect(200)).body.events;
      expect(event).toMatchObject({ type: 'task.updated', data: { task: { id: done.id, sprint: null }, changes } });

      // Finished, or not a status change, or a sprint named by the body: the rule does not apply.
      const closed = { id: sprint.id, name: 'Closed', status: 'closed' };
      expect((await own.api.patch(`/api/v1/tasks/${kept.id}`, { status: 'cancelled' }).expect(200)).body.task.sprint).toEqual(closed);
      expect((await own.api.patch(`/api/v1/tasks/${renamed.id}`, { title: 'Renamed' }).expect(200)).body.task.sprint).toEqual(closed);
      const intoNext = (await own.api.patch(`/api/v1/tasks/${moved.id}`, { status: 'todo', sprintId: next.id }).expect(200)).body.task;
      expect(intoNext.sprint).toEqual({ id: next.id, name: 'Next', status: 'planned' });
      // Frozen at the close, byte for byte.
      expect((await own.api.get(`/api/v1/sprints/${sprint.id}/report`).expect(200)).text).toBe(report);
      const open = await own.api.get(`/api/v1/tasks?sprintId=${sprint.id}&status=backlog,planning,todo,in_progress,in_review`).expect(200);
      expect(open.body.total).toBe(0);
    });

    it('is not reachable with a project key', async () => {
      const sprint = await createSprint(project);
      await project.api.post(`/admin/v1/sprints/${sprint.id}/activate`).expect(401);
    });
  });
});
