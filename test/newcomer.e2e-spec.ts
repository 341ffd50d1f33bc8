import { createProject, createTask, TaskJson, TestProject } from './support/fixtures';
import { startTestApp, TestApp } from './support/test-app';

// decisions.md section 26: what a newcomer trips on, each rule through HTTP.
describe('what a newcomer trips on (decisions.md section 26)', () => {
  let t: TestApp;
  let project: TestProject;
  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t, 'Newcomer');
  });
  afterAll(() => t.close());

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
