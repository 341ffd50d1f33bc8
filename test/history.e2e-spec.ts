import { createProject, createTask, ISO_TIMESTAMP, NO_SUCH_ID, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

describe('GET /api/v1/tasks/{taskId}/history', () => {
  const t = useTestApp();
  const project = useProject(t);

  it('lists entries newest first as {id, createdAt, actor, action, changes}', async () => {
    const task = await createTask(project, { title: 'One' });
    await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Two', status: 'done' }).expect(200);
    const res = await project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['history', 'nextCursor']);
    expect(res.body.nextCursor).toBeNull();
    const [updated, created] = res.body.history;
    expect(Object.keys(updated).sort()).toEqual(['action', 'actor', 'changes', 'createdAt', 'id']);
    expect(updated).toMatchObject({
      action: 'updated',
      actor: 'Test key (API)',
      changes: [
        { field: 'title', from: 'One', to: 'Two' },
        { field: 'status', from: 'backlog', to: 'done' },
      ],
    });
    expect(updated.createdAt).toMatch(ISO_TIMESTAMP);
    expect(created.action).toBe('created');
  });

  it('paginates with limit and cursor, each entry once', async () => {
    const task = await createTask(project);
    for (let i = 0; i < 6; i++) await project.api.patch(`/api/v1/tasks/${task.id}`, { title: `Title ${i}` }).expect(200);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/tasks/${task.id}/history?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await project.api.get(url).expect(200);
      expect(res.body.history.length).toBeGreaterThan(0);
      seen.push(...res.body.history.map((entry: { id: string }) => entry.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
  });

  it('rejects an invalid limit, an altered cursor and unknown parameters', async () => {
    const task = await createTask(project);
    expect((await project.api.get(`/api/v1/tasks/${task.id}/history?limit=0`).expect(400)).body.code).toBe('validation_failed');
    expect((await project.api.get(`/api/v1/tasks/${task.id}/history?cursor=abc.def`).expect(400)).body.code).toBe('invalid_cursor');
    expect((await project.api.get(`/api/v1/tasks/${task.id}/history?action=created`).expect(400)).body.code).toBe('unknown_field');
  });

  it('answers 404 for a task in the trash, of another project, or unknown', async () => {
    const other = await createProject(t, 'Other');
    const theirs = await createTask(other);
    const trashed = await createTask(project);
    await project.api.delete(`/api/v1/tasks/${trashed.id}`).expect(204);
    for (const id of [theirs.id, trashed.id, NO_SUCH_ID, 'x']) {
      const res = await project.api.get(`/api/v1/tasks/${id}/history`);
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    }
  });

  it('writes history in the same transaction as the change: a refused change leaves none', async () => {
    const task = await createTask(project);
    await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Valid', assigneeId: NO_SUCH_ID }).expect(404);
    const res = await project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200);
    expect(res.body.history.map((entry: { action: string }) => entry.action)).toEqual(['created']);
  });
});
