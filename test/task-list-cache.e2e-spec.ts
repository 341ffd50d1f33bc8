import { TaskListCache } from '../src/tasks/task-list-cache';
import { createProject, createTask, TestProject } from './support/fixtures';
import { startTestApp, TestApp } from './support/test-app';

// The page cache is bounded in keys (task-list-cache.spec.ts checks its real limits); here its
// limits are lowered on the running app, so that many distinct lists make it forget, and every
// list must still answer what the database holds.
describe('task lists past the bounds of the page cache', () => {
  let t: TestApp;
  let project: TestProject;
  let cache: TaskListCache;
  const titles = Array.from({ length: 12 }, (_, i) => `task ${String(i).padStart(3, '0')}`);

  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t);
    for (const title of titles) await createTask(project, { title });
    cache = t.app.get(TaskListCache);
    Object.assign(cache.limits, { pages: 10, totals: 5 });
  });
  afterAll(() => t.close());

  /** Lists with distinct `q` (and `limit`) values: most match nothing, some one task. */
  const lists = Array.from({ length: 60 }, (_, i) => ({ q: String(i).padStart(3, '0'), limit: 1 + (i % 3) }));

  async function expectEveryListAnswersTheDatabase(): Promise<void> {
    for (const { q, limit } of lists) {
      const res = await project.api.get(`/api/v1/tasks?q=${q}&limit=${limit}`).expect(200);
      const matching = await t.prisma.task.count({ where: { projectId: project.id, deletedAt: null, title: { contains: q } } });
      expect({ q, limit, total: res.body.total, shown: res.body.tasks.length }).toEqual({
        q,
        limit,
        total: matching,
        shown: Math.min(limit, matching),
      });
      for (const task of res.body.tasks) expect(task.title).toContain(q);
    }
    const usage = cache.usage();
    expect(usage.pages).toBeLessThanOrEqual(10);
    expect(usage.totals).toBeLessThanOrEqual(5);
  }

  it('answers each of many distinct lists as the database holds it, while the cache forgets', async () => {
    await expectEveryListAnswersTheDatabase();
    // Again: the last lists are remembered, the first ones were forgotten and are read anew.
    await expectEveryListAnswersTheDatabase();
  });

  it('answers them as the database holds them after a change', async () => {
    await createTask(project, { title: 'task 005 again' });
    await createTask(project, { title: 'task 058' });
    await expectEveryListAnswersTheDatabase();
  });
});
