import { EmbeddedMaintenance } from '../src/database/embedded-maintenance';
import { createProject } from './support/fixtures';
import { engine, startTestApp, TestApp } from './support/test-app';

// PGlite runs no autovacuum: the service vacuums and analyzes the embedded database's tables
// as they grow (src/database/embedded-maintenance.ts). On PostgreSQL, autovacuum does.
describe('the embedded database’s autovacuum', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** What the planner knows of the tasks table: rows and pages at its last VACUUM or ANALYZE (-1 rows: never). */
  const tasksStatistics = async () =>
    (
      await t.prisma.$queryRaw<
        { rows: number; pages: number }[]
      >`SELECT reltuples::float8 AS rows, relpages AS pages FROM pg_class WHERE relname = 'tasks'`
    )[0];

  /** 600 more tasks, 12 pages: past the 8 a new table may grow by before it is done, and past a fifth more after. */
  async function grow(): Promise<void> {
    const project = await createProject(t, 'Growing');
    for (let i = 0; i < 6; i++) {
      const tasks = Array.from({ length: 100 }, (_, n) => ({
        title: `Task ${i}.${n}`,
        description: 'Enough text to fill a few pages of the table.',
      }));
      await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(201);
    }
  }

  (engine === 'pglite' ? it : it.skip)(
    'vacuums and analyzes a table once it has grown by a fifth since it was last done, and not before (PGlite)',
    async () => {
      const maintenance = t.app.get(EmbeddedMaintenance);
      await grow();
      expect(await maintenance.run()).toContain('tasks');
      const done = await tasksStatistics();
      expect(done.rows).toBeGreaterThanOrEqual(600);
      expect(await maintenance.run()).not.toContain('tasks');
      await grow();
      expect(await maintenance.run()).toContain('tasks');
      expect((await tasksStatistics()).pages).toBeGreaterThan(done.pages);
    },
  );

  (engine === 'postgresql' ? it : it.skip)('leaves the tables to autovacuum (PostgreSQL)', async () => {
    await grow();
    expect(await t.app.get(EmbeddedMaintenance).run()).toEqual([]);
  });
});
