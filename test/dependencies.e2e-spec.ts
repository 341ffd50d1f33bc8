import { createProject, createTask, NO_SUCH_ID, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

describe('task dependencies', () => {
  const t = useTestApp();
  const project = useProject(t);

  const add = (taskId: string, blockedById: string) => project.api.post(`/api/v1/tasks/${taskId}/dependencies`, { blockedById });

  it('adds "blocked by": 201 with the task in full, shown in both directions', async () => {
    const blocker = await createTask(project, { title: 'First' });
    const task = await createTask(project, { title: 'Second' });
    const res = await add(task.id, blocker.id).expect(201);
    expect(res.body.task).toMatchObject({
      id: task.id,
      blocked: true,
      dependencies: { blockedBy: [{ id: blocker.id, title: 'First', status: 'backlog' }], blocks: [] },
    });
    const other = (await project.api.get(`/api/v1/tasks/${blocker.id}`).expect(200)).body.task;
    expect(other.dependencies).toEqual({ blockedBy: [], blocks: [{ id: task.id, title: 'Second', status: 'backlog' }] });
    expect(await t.prisma.taskDependency.count({ where: { taskId: task.id, blockedById: blocker.id } })).toBe(1);
  });

  it('answers 400 when a task would block itself', async () => {
    const task = await createTask(project);
    const res = await add(task.id, task.id).expect(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'blockedById' }] });
  });

  it('answers 409 dependency_exists for a dependency that is already there', async () => {
    const [a, b] = [await createTask(project), await createTask(project)];
    await add(a.id, b.id).expect(201);
    const res = await add(a.id, b.id).expect(409);
    expect(res.body.code).toBe('dependency_exists');
  });

  it('answers 409 dependency_cycle for a cycle of two', async () => {
    const [a, b] = [await createTask(project), await createTask(project)];
    await add(a.id, b.id).expect(201);
    const res = await add(b.id, a.id).expect(409);
    expect(res.body.code).toBe('dependency_cycle');
  });

  it('answers 409 dependency_cycle for a cycle of any length', async () => {
    const chain = [];
    for (let i = 0; i < 12; i++) chain.push(await createTask(project, { title: `Link ${i}` }));
    for (let i = 0; i < chain.length - 1; i++) await add(chain[i].id, chain[i + 1].id).expect(201);
    const res = await add(chain[chain.length - 1].id, chain[0].id).expect(409);
    expect(res.body.code).toBe('dependency_cycle');
    // A shortcut in the same direction is not a cycle.
    await add(chain[0].id, chain[5].id).expect(201);
  });

  it('counts trashed tasks in the cycle check, since restoring them brings their dependencies back', async () => {
    const [a, b, c] = [await createTask(project), await createTask(project), await createTask(project)];
    await add(a.id, b.id).expect(201);
    await add(b.id, c.id).expect(201);
    await project.api.delete(`/api/v1/tasks/${b.id}`).expect(204);
    const res = await add(c.id, a.id).expect(409);
    expect(res.body.code).toBe('dependency_cycle');
  });

  it('lets only one of two concurrent inserts that would close a cycle succeed', async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b] = [await createTask(project), await createTask(project)];
      const results = await Promise.all([add(a.id, b.id), add(b.id, a.id)]);
      expect(results.map((res) => res.status).sort()).toEqual([201, 409]);
      expect(await t.prisma.taskDependency.count({ where: { taskId: { in: [a.id, b.id] } } })).toBe(1);
    }
  });

  it('answers 404 when either task is absent, trashed, or of another project', async () => {
    const other = await createProject(t, 'Other');
    const theirs = await createTask(other);
    const trashed = await createTask(project);
    await project.api.delete(`/api/v1/tasks/${trashed.id}`).expect(204);
    const task = await createTask(project);
    for (const [taskId, blockedById] of [
      [task.id, theirs.id],
      [theirs.id, task.id],
      [task.id, trashed.id],
      [trashed.id, task.id],
      [task.id, NO_SUCH_ID],
      ['nope', task.id],
    ]) {
      const res = await add(taskId, blockedById);
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    }
    expect(await t.prisma.taskDependency.count({ where: { taskId: task.id } })).toBe(0);
  });

  it('rejects a body without blockedById or with unknown fields', async () => {
    const task = await createTask(project);
    const missing = await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, {}).expect(400);
    expect(missing.body.code).toBe('validation_failed');
    const unknown = await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: task.id, kind: 'x' }).expect(400);
    expect(unknown.body.code).toBe('unknown_field');
  });

  it('removes a dependency: 204, then 404 when it is not there', async () => {
    const [a, b] = [await createTask(project), await createTask(project)];
    await add(a.id, b.id).expect(201);
    await project.api.delete(`/api/v1/tasks/${a.id}/dependencies/${b.id}`).expect(204);
    expect((await project.api.get(`/api/v1/tasks/${a.id}`)).body.task).toMatchObject({ blocked: false, dependencies: { blockedBy: [] } });
    const again = await project.api.delete(`/api/v1/tasks/${a.id}/dependencies/${b.id}`).expect(404);
    expect(again.body.code).toBe('not_found');
    await project.api.delete(`/api/v1/tasks/${b.id}/dependencies/${a.id}`).expect(404);
  });

  it('records dependency_added and dependency_removed in the history of the blocked task', async () => {
    const [a, b] = [await createTask(project), await createTask(project)];
    await add(a.id, b.id).expect(201);
    await project.api.delete(`/api/v1/tasks/${a.id}/dependencies/${b.id}`).expect(204);
    const history = (await project.api.get(`/api/v1/tasks/${a.id}/history`).expect(200)).body.history;
    expect(history.slice(0, 2)).toEqual([
      expect.objectContaining({ action: 'dependency_removed', actor: 'Test key (API)', changes: [{ field: 'blockedById', from: b.id, to: null }] }),
      expect.objectContaining({ action: 'dependency_added', changes: [{ field: 'blockedById', from: null, to: b.id }] }),
    ]);
  });

  it('needs the tasks:edit permission', async () => {
    const reader = await project.issueKey(['tasks:create', 'tasks:delete', 'sprints:manage'], 'No edit');
    const [a, b] = [await createTask(project), await createTask(project)];
    const res = await reader.api.post(`/api/v1/tasks/${a.id}/dependencies`, { blockedById: b.id }).expect(403);
    expect(res.body).toMatchObject({ code: 'insufficient_permission', requiredPermission: 'tasks:edit' });
    await reader.api.delete(`/api/v1/tasks/${a.id}/dependencies/${b.id}`).expect(403);
  });
});
