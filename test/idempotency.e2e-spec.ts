import { createProject, createTask, NO_SUCH_ID, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

describe('Idempotency-Key', () => {
  const t = useTestApp();
  const project = useProject(t, 'Idempotency');

  const countTasks = (projectId: string, title: string) => t.prisma.task.count({ where: { projectId, title } });
  const storedAnswers = (keyId: string) => t.prisma.idempotentRequest.count({ where: { keyId } });

  it('replays a create byte for byte with Idempotent-Replayed: one task, one history entry, one event', async () => {
    const body = { title: 'Created once', priority: 'high', labelIds: [project.labels[0].id] };
    const first = await project.api.post('/api/v1/tasks', body).set('Idempotency-Key', 'create-1').expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same body with its keys in another order is the same request.
    const again = await project.api
      .post('/api/v1/tasks', { labelIds: body.labelIds, priority: 'high', title: 'Created once' })
      .set('Idempotency-Key', 'create-1')
      .expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(again.headers['location']).toBe(first.headers['location']);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(await countTasks(project.id, 'Created once')).toBe(1);
    const taskId = first.body.task.id;
    expect(await t.prisma.historyEntry.count({ where: { taskId } })).toBe(1);
    expect(
      await t.prisma.event.count({ where: { projectId: project.id, type: 'task.created', data: { path: ['task', 'id'], equals: taskId } } }),
    ).toBe(1);
  });

  it('replays a PATCH with its ETag and records the change once', async () => {
    const task = await createTask(project, { title: 'To patch' });
    const first = await project.api.patch(`/api/v1/tasks/${task.id}`, { status: 'done' }).set('Idempotency-Key', 'patch-1').expect(200);
    await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Changed by someone else' }).expect(200);
    const again = await project.api.patch(`/api/v1/tasks/${task.id}`, { status: 'done' }).set('Idempotency-Key', 'patch-1').expect(200);
    expect(again.text).toBe(first.text);
    expect(again.headers['etag']).toBe(first.headers['etag']);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const history = await t.prisma.historyEntry.findMany({ where: { taskId: task.id, action: 'updated' } });
    expect(history).toHaveLength(2);
  });

  it('replays a DELETE as 204 again, not 404, with one trash entry', async () => {
    const task = await createTask(project, { title: 'To trash' });
    await project.api.delete(`/api/v1/tasks/${task.id}`).set('Idempotency-Key', 'delete-1').expect(204);
    const again = await project.api.delete(`/api/v1/tasks/${task.id}`).set('Idempotency-Key', 'delete-1').expect(204);
    expect(again.text).toBe('');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await t.prisma.historyEntry.count({ where: { taskId: task.id, action: 'deleted' } })).toBe(1);
    await project.api.delete(`/api/v1/tasks/${task.id}`).expect(404);
  });

  it('lets exactly one of 20 concurrent requests with one key run; the others get the replay or 409', async () => {
    const own = await createProject(t, 'Idempotency race');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => own.api.post('/api/v1/tasks', { title: 'Raced' }).set('Idempotency-Key', 'race')),
    );
    const created = answers.filter((res) => res.status === 201);
    const ids = new Set(created.map((res) => res.body.task.id));
    expect(ids.size).toBe(1);
    expect(created.filter((res) => res.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
    for (const res of answers.filter((answer) => answer.status !== 201)) {
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('idempotency_in_progress');
      expect(res.headers['retry-after']).toBe('1');
    }
    expect(await countTasks(own.id, 'Raced')).toBe(1);
  });

  it('answers simultaneous retries of a finished request all with the replay, never 409', async () => {
    const own = await createProject(t, 'Idempotency retries');
    const first = await own.api.post('/api/v1/tasks', { title: 'Retried' }).set('Idempotency-Key', 'retried').expect(201);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => own.api.post('/api/v1/tasks', { title: 'Retried' }).set('Idempotency-Key', 'retried')),
    );
    for (const res of answers) {
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(res.text).toBe(first.text);
    }
    expect(await countTasks(own.id, 'Retried')).toBe(1);
  });

  it('answers 422 idempotency_key_reused for the same key with another body, path or method', async () => {
    await project.api.post('/api/v1/tasks', { title: 'Original' }).set('Idempotency-Key', 'reused').expect(201);
    for (const res of [
      await project.api.post('/api/v1/tasks', { title: 'Another' }).set('Idempotency-Key', 'reused'),
      await project.api.post('/api/v1/sprints', { title: 'Original' }).set('Idempotency-Key', 'reused'),
      await project.api.post('/api/v1/tasks?x=1', { title: 'Original' }).set('Idempotency-Key', 'reused'),
    ]) {
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    }
    expect(await countTasks(project.id, 'Another')).toBe(0);
  });

  it('keeps each API key to its own entries', async () => {
    const other = await project.issueKey(['tasks:create'], 'Other key');
    const mine = await project.api.post('/api/v1/tasks', { title: 'Per key' }).set('Idempotency-Key', 'shared-name').expect(201);
    const theirs = await other.api.post('/api/v1/tasks', { title: 'Per key' }).set('Idempotency-Key', 'shared-name').expect(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.task.id).not.toBe(mine.body.task.id);
    expect(await countTasks(project.id, 'Per key')).toBe(2);
  });

  it('does not store a failed attempt: the retry after the sprint exists creates the task', async () => {
    const own = await createProject(t, 'Idempotency retry');
    const failed = await own.api.post('/api/v1/tasks', { title: 'Waits for its sprint', sprintId: NO_SUCH_ID }).set('Idempotency-Key', 'retry-me');
    expect(failed.status).toBe(404);
    expect(await storedAnswers((await t.prisma.apiKey.findFirstOrThrow({ where: { projectId: own.id } })).id)).toBe(0);
    const sprint = (await own.api.post('/api/v1/sprints', { name: 'Now it exists' }).expect(201)).body.sprint;
    const res = await own.api
      .post('/api/v1/tasks', { title: 'Waits for its sprint', sprintId: sprint.id })
      .set('Idempotency-Key', 'retry-me')
      .expect(201);
    expect(res.body.task.sprint.id).toBe(sprint.id);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('commits the stored answer with the change: when storing it fails, the task is not created either', async () => {
    const own = await createProject(t, 'Idempotency atomic');
    // The project's set-up (its members and labels) has events of its own.
    const eventsBefore = await t.prisma.event.count({ where: { projectId: own.id } });
    await t.prisma.$executeRawUnsafe(`
      CREATE FUNCTION refuse_stored_answers() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused for the test'; END $$`);
    await t.prisma.$executeRawUnsafe(
      'CREATE TRIGGER refuse_stored_answers BEFORE INSERT ON idempotent_requests FOR EACH ROW EXECUTE FUNCTION refuse_stored_answers()',
    );
    try {
      const res = await own.api.post('/api/v1/tasks', { title: 'Never half done' }).set('Idempotency-Key', 'atomic');
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('internal');
    } finally {
      await t.prisma.$executeRawUnsafe('DROP TRIGGER refuse_stored_answers ON idempotent_requests');
      await t.prisma.$executeRawUnsafe('DROP FUNCTION refuse_stored_answers()');
    }
    expect(await countTasks(own.id, 'Never half done')).toBe(0);
    expect(await t.prisma.event.count({ where: { projectId: own.id } })).toBe(eventsBefore);
    expect(await t.prisma.idempotentRequest.count({ where: { idempotencyKey: 'atomic' } })).toBe(0);
  });

  it.each([
    ['an empty value', ''],
    ['a value over 255 characters', 'k'.repeat(256)],
    ['a space', 'has space'],
    ['a non-ASCII character', 'clé'],
  ])('refuses %s with 400 invalid_idempotency_key, after the key and permission checks', async (_, value) => {
    const res = await project.api.post('/api/v1/tasks', { title: 'Bad key' }).set('Idempotency-Key', value);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_idempotency_key');
    const reader = await project.issueKey([], 'Reader');
    expect((await reader.api.post('/api/v1/tasks', { title: 'Bad key' }).set('Idempotency-Key', value)).status).toBe(403);
    expect(await countTasks(project.id, 'Bad key')).toBe(0);
  });

  it('checks the key before the body: a replay needs no valid body, a reused key with a bad body is 422', async () => {
    await project.api.post('/api/v1/tasks', { title: 'Checked first' }).set('Idempotency-Key', 'order').expect(201);
    const res = await project.api.post('/api/v1/tasks', { title: '' }).set('Idempotency-Key', 'order');
    expect(res.status).toBe(422);
  });

  it('forgets answers after IDEMPOTENCY_TTL_HOURS, and the service removes them', async () => {
    const own = await createProject(t, 'Idempotency expiry');
    await own.api.post('/api/v1/tasks', { title: 'Expires' }).set('Idempotency-Key', 'old').expect(201);
    await t.prisma.idempotentRequest.updateMany({ where: { idempotencyKey: 'old' }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const again = await own.api.post('/api/v1/tasks', { title: 'Expires' }).set('Idempotency-Key', 'old').expect(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await countTasks(own.id, 'Expires')).toBe(2);
    await t.prisma.idempotentRequest.updateMany({ where: { idempotencyKey: 'old' }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const { IdempotencyService } = await import('../src/idempotency/idempotency.service');
    expect(await t.app.get(IdempotencyService).removeExpired()).toBeGreaterThanOrEqual(1);
    expect(await t.prisma.idempotentRequest.count({ where: { idempotencyKey: 'old' } })).toBe(0);
  });

  it('works on sprints, dependencies and the trash too', async () => {
    const sprint = await project.api.post('/api/v1/sprints', { name: 'Once' }).set('Idempotency-Key', 'sprint-1').expect(201);
    const again = await project.api.post('/api/v1/sprints', { name: 'Once' }).set('Idempotency-Key', 'sprint-1').expect(201);
    expect(again.body.sprint.id).toBe(sprint.body.sprint.id);
    const [a, b] = [await createTask(project), await createTask(project)];
    await project.api.post(`/api/v1/tasks/${a.id}/dependencies`, { blockedById: b.id }).set('Idempotency-Key', 'dep-1').expect(201);
    const dependency = await project.api.post(`/api/v1/tasks/${a.id}/dependencies`, { blockedById: b.id }).set('Idempotency-Key', 'dep-1');
    expect(dependency.status).toBe(201);
    expect(dependency.headers['idempotent-replayed']).toBe('true');
    await project.api.delete(`/api/v1/tasks/${a.id}`).expect(204);
    const restored = await project.api.post(`/api/v1/trash/${a.id}/restore`).set('Idempotency-Key', 'restore-1').expect(200);
    const restoredAgain = await project.api.post(`/api/v1/trash/${a.id}/restore`).set('Idempotency-Key', 'restore-1').expect(200);
    expect(restoredAgain.text).toBe(restored.text);
  });
});
