import { asAdmin, createProject, createTask, NO_SUCH_ID, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

const STRONG_ETAG = /^"[A-Za-z0-9_-]+"$/;

describe('conditional requests: ETag, If-None-Match, If-Match', () => {
  const t = useTestApp();
  const project = useProject(t, 'Conditional');
  let taskId: string;
  let sprintId: string;
  beforeAll(async () => {
    taskId = (await createTask(project, { title: 'Watched', labelIds: [project.labels[0].id] })).id;
    sprintId = (await project.api.post('/api/v1/sprints', { name: 'Watched sprint' }).expect(201)).body.sprint.id;
    await project.api.delete(`/api/v1/tasks/${(await createTask(project, { title: 'In the trash' })).id}`).expect(204);
  });

  describe('ETag and If-None-Match on every GET', () => {
    const reads = () => [
      '/api/v1/tasks',
      '/api/v1/tasks?status=backlog&limit=5',
      `/api/v1/tasks/${taskId}`,
      `/api/v1/tasks/${taskId}/history`,
      '/api/v1/sprints',
      `/api/v1/sprints/${sprintId}`,
      '/api/v1/trash',
      '/api/v1/members',
      '/api/v1/labels',
      '/api/v1/events',
    ];

    it('answers 200 with a strong ETag, and 304 with no body (and the ETag) for If-None-Match naming it', async () => {
      for (const url of reads()) {
        const first = await project.api.get(url).expect(200);
        expect(first.headers['etag']).toMatch(STRONG_ETAG);
        const again = await project.api.get(url).expect(200);
        expect(again.headers['etag']).toBe(first.headers['etag']);
        const notModified = await project.api.get(url).set('If-None-Match', first.headers['etag']);
        expect(notModified.status).toBe(304);
        expect(notModified.text).toBe('');
        expect(notModified.headers['etag']).toBe(first.headers['etag']);
        expect(notModified.headers['ratelimit-limit']).toBeDefined();
        // A list of tags, a weak twin and * match too; another tag does not.
        expect((await project.api.get(url).set('If-None-Match', `"other", ${first.headers['etag']}`)).status).toBe(304);
        expect((await project.api.get(url).set('If-None-Match', `W/${first.headers['etag']}`)).status).toBe(304);
        expect((await project.api.get(url).set('If-None-Match', '*')).status).toBe(304);
        expect((await project.api.get(url).set('If-None-Match', '"other"')).status).toBe(200);
      }
    });

    it('changes the list ETag after a create, a patch and a label rename, and not otherwise', async () => {
      const own = await createProject(t, 'Conditional list');
      const task = await createTask(own, { labelIds: [own.labels[1].id] });
      const tag = async () => (await own.api.get('/api/v1/tasks').expect(200)).headers['etag'];
      const states = [await tag()];
      await own.api.get(`/api/v1/tasks/${task.id}`).expect(200);
      await own.api.patch(`/api/v1/tasks/${task.id}`, { title: 'A task' }).expect(200); // the same value: no change
      expect(await tag()).toBe(states[0]);
      await createTask(own);
      states.push(await tag());
      await own.api.patch(`/api/v1/tasks/${task.id}`, { priority: 'urgent' }).expect(200);
      states.push(await tag());
      await asAdmin(t).patch(`/admin/v1/labels/${own.labels[1].id}`, { name: 'renamed' }).expect(200);
      states.push(await tag());
      expect(new Set(states).size).toBe(4);
      const notModified = await own.api.get('/api/v1/tasks').set('If-None-Match', states[3]);
      expect(notModified.status).toBe(304);
    });

    it('answers a PATCH with the ETag of the resource that a GET then answers', async () => {
      const patched = await project.api.patch(`/api/v1/tasks/${taskId}`, { description: 'New' }).expect(200);
      const read = await project.api.get(`/api/v1/tasks/${taskId}`).expect(200);
      expect(patched.headers['etag']).toBe(read.headers['etag']);
      const sprint = await project.api.patch(`/api/v1/sprints/${sprintId}`, { goal: 'New goal' }).expect(200);
      expect(sprint.headers['etag']).toBe((await project.api.get(`/api/v1/sprints/${sprintId}`)).headers['etag']);
    });
  });

  describe('If-Match on PATCH and DELETE', () => {
    it('applies a PATCH whose If-Match names the current ETag, and refuses a stale one with 412 and the current ETag', async () => {
      const task = await createTask(project, { title: 'Guarded' });
      const tag = (await project.api.get(`/api/v1/tasks/${task.id}`)).headers['etag'];
      const applied = await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Guarded v2' }).set('If-Match', tag).expect(200);
      const stale = await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Guarded v3' }).set('If-Match', tag);
      expect(stale.status).toBe(412);
      expect(stale.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(stale.body).toMatchObject({ code: 'precondition_failed', status: 412 });
      expect(stale.headers['etag']).toBe(applied.headers['etag']);
      expect((await project.api.get(`/api/v1/tasks/${task.id}`)).body.task.title).toBe('Guarded v2');
      await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Guarded v3' }).set('If-Match', '*').expect(200);
      // A weak tag never matches If-Match (strong comparison).
      const current = (await project.api.get(`/api/v1/tasks/${task.id}`)).headers['etag'];
      expect((await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'v4' }).set('If-Match', `W/${current}`)).status).toBe(412);
    });

    it('lets exactly one of two PATCHes with the same If-Match win; history shows one change', async () => {
      const task = await createTask(project, { title: 'Contended' });
      const tag = (await project.api.get(`/api/v1/tasks/${task.id}`)).headers['etag'];
      const answers = await Promise.all([
        project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Client A' }).set('If-Match', tag),
        project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Client B' }).set('If-Match', tag),
      ]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 412]);
      const history = (await project.api.get(`/api/v1/tasks/${task.id}/history`)).body.history;
      expect(history.filter((entry: { action: string }) => entry.action === 'updated')).toHaveLength(1);
    });

    it('refuses a DELETE with a stale If-Match and changes nothing; answers 404 for a missing task whatever If-Match says', async () => {
      const task = await createTask(project, { title: 'Delete guarded' });
      const tag = (await project.api.get(`/api/v1/tasks/${task.id}`)).headers['etag'];
      await project.api.patch(`/api/v1/tasks/${task.id}`, { priority: 'low' }).expect(200);
      expect((await project.api.delete(`/api/v1/tasks/${task.id}`).set('If-Match', tag)).status).toBe(412);
      await project.api.get(`/api/v1/tasks/${task.id}`).expect(200);
      const current = (await project.api.get(`/api/v1/tasks/${task.id}`)).headers['etag'];
      await project.api.delete(`/api/v1/tasks/${task.id}`).set('If-Match', current).expect(204);
      expect((await project.api.delete(`/api/v1/tasks/${NO_SUCH_ID}`).set('If-Match', current)).status).toBe(404);
      expect((await project.api.patch(`/api/v1/tasks/${NO_SUCH_ID}`, { title: 'x' }).set('If-Match', current)).status).toBe(404);
    });

    it('guards sprints the same way, 412 before the date window check that needs the current state', async () => {
      const sprint = (await project.api.post('/api/v1/sprints', { name: 'Guarded sprint', startDate: '2026-12-01' }).expect(201)).body.sprint;
      const tag = (await project.api.get(`/api/v1/sprints/${sprint.id}`)).headers['etag'];
      await project.api.patch(`/api/v1/sprints/${sprint.id}`, { name: 'Renamed' }).set('If-Match', tag).expect(200);
      const stale = await project.api.patch(`/api/v1/sprints/${sprint.id}`, { endDate: '2026-11-01' }).set('If-Match', tag);
      expect(stale.status).toBe(412);
      expect(stale.body.code).toBe('precondition_failed');
      expect((await project.api.delete(`/api/v1/sprints/${sprint.id}`).set('If-Match', tag)).status).toBe(412);
      await project.api.get(`/api/v1/sprints/${sprint.id}`).expect(200);
      const current = (await project.api.get(`/api/v1/sprints/${sprint.id}`)).headers['etag'];
      await project.api.delete(`/api/v1/sprints/${sprint.id}`).set('If-Match', current).expect(204);
    });
  });
});
