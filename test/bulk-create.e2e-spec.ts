import { createProject, createTask, NO_SUCH_ID, TaskJson, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

describe('POST /api/v1/tasks/bulk', () => {
  const t = useTestApp();
  const project = useProject(t, 'Bulk');

  const titled = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ title: `${prefix} ${i}` }));
  const countTitled = (projectId: string, prefix: string) => t.prisma.task.count({ where: { projectId, title: { startsWith: prefix } } });

  it('creates every task in one go and answers them in full, in the order sent, each as GET answers it', async () => {
    const [bug, feature] = project.labels;
    const sprint = (await project.api.post('/api/v1/sprints', { name: 'Bulk sprint' }).expect(201)).body.sprint;
    const parent = await createTask(project, { title: 'Bulk parent' });
    const bodies = [
      { title: 'Imported 1', labelIds: [bug.id, feature.id], assigneeId: project.members[0].membershipId },
      { title: 'Imported 2', status: 'done', sprintId: sprint.id, dueDate: '2027-01-31' },
      { title: 'Imported 3', parentId: parent.id, description: 'From the old tracker' },
    ];
    const res = await project.api.post('/api/v1/tasks/bulk', { tasks: bodies }).expect(201);
    expect(Object.keys(res.body)).toEqual(['tasks']);
    expect(res.body.tasks.map((task: TaskJson) => task.title)).toEqual(['Imported 1', 'Imported 2', 'Imported 3']);
    for (const task of res.body.tasks) {
      expect(task).toEqual((await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task);
    }
    expect(res.body.tasks[1].completedAt).not.toBeNull();
    expect(res.body.tasks[2].parentId).toBe(parent.id);
    for (const task of res.body.tasks) {
      expect(await t.prisma.historyEntry.count({ where: { taskId: task.id, action: 'created' } })).toBe(1);
      expect(
        await t.prisma.event.count({ where: { projectId: project.id, type: 'task.created', data: { path: ['task', 'id'], equals: task.id } } }),
      ).toBe(1);
    }
  });

  it('takes up to 100 tasks, and refuses none or 101 with 400', async () => {
    const res = await project.api.post('/api/v1/tasks/bulk', { tasks: titled('Hundred', 100) }).expect(201);
    expect(res.body.tasks).toHaveLength(100);
    expect(await countTitled(project.id, 'Hundred')).toBe(100);
    for (const tasks of [[], titled('Too many', 101)]) {
      const refused = await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(400);
      expect(refused.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'tasks' }] });
    }
    expect(await countTitled(project.id, 'Too many')).toBe(0);
  });

  it('fails the whole request on the first invalid item, naming its fields (tasks[3].title), and creates nothing', async () => {
    const tasks = [...titled('Invalid batch', 3), { title: '' }, { title: 'x'.repeat(201) }];
    const res = await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((error: { field: string }) => error.field)).toEqual(['tasks[3].title']);
    const unknown = await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'ok' }, { title: 'ok', colour: 'red' }] }).expect(400);
    expect(unknown.body).toMatchObject({ code: 'unknown_field', errors: [{ field: 'tasks[1].colour' }] });
    // The first invalid item is the one answered, whatever the kinds of problem of later ones.
    const first = await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: '' }, { title: 'ok', colour: 'red' }] }).expect(400);
    expect(first.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'tasks[0].title' }] });
    for (const item of ['not an object', 1, null]) {
      const notObject = await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'ok' }, item] }).expect(400);
      expect(notObject.body.errors).toEqual([{ field: 'tasks[1]', message: 'must be a task body: a JSON object, as POST /api/v1/tasks takes it' }]);
    }
    expect(await countTitled(project.id, 'Invalid batch')).toBe(0);
  });

  it('answers 404 naming the item whose reference is not in the project, and creates nothing', async () => {
    const other = await createProject(t, 'Bulk other');
    const foreignSprint = (await other.api.post('/api/v1/sprints', { name: 'Not yours' }).expect(201)).body.sprint;
    const tasks = [...titled('Missing ref', 2), { title: 'Missing ref 2', sprintId: foreignSprint.id }];
    const res = await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(404);
    expect(res.body).toMatchObject({ code: 'not_found', errors: [{ field: 'tasks[2].sprintId' }] });
    const labels = await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'Missing ref 3', labelIds: [NO_SUCH_ID] }] }).expect(404);
    expect(labels.body.errors[0].field).toBe('tasks[0].labelIds');
    expect(await countTitled(project.id, 'Missing ref')).toBe(0);
  });

  it('checks every item before any reference: a subtask as parent (400) in a later item wins over a 404 in an earlier one', async () => {
    const root = await createTask(project, { title: 'Root' });
    const sub = await createTask(project, { title: 'Sub', parentId: root.id });
    const tasks = [
      { title: 'Order 0', assigneeId: NO_SUCH_ID },
      { title: 'Order 1', parentId: sub.id },
    ];
    const res = await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(400);
    expect(res.body).toMatchObject({ code: 'nesting_too_deep', errors: [{ field: 'tasks[1].parentId' }] });
  });

  it('needs tasks:create', async () => {
    const reader = await project.issueKey(['tasks:edit'], 'Editor only');
    const res = await reader.api.post('/api/v1/tasks/bulk', { tasks: titled('Forbidden', 1) }).expect(403);
    expect(res.body.requiredPermission).toBe('tasks:create');
  });

  it('honours Idempotency-Key: a retry gets the same tasks, created once', async () => {
    const body = { tasks: titled('Once only', 5) };
    const first = await project.api.post('/api/v1/tasks/bulk', body).set('Idempotency-Key', 'bulk-1').expect(201);
    const again = await project.api.post('/api/v1/tasks/bulk', body).set('Idempotency-Key', 'bulk-1').expect(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await countTitled(project.id, 'Once only')).toBe(5);
  });
});
