import { EmbeddedMaintenance } from '../src/database/embedded-maintenance';
import { createProject } from './support/fixtures';
import { engine, useTestApp } from './support/test-app';

// PGlite runs no autovacuum: the service vacuums and analyzes the embedded database's tables
// past autovacuum's thresholds, a little at a time (src/database/embedded-maintenance.ts). On
// PostgreSQL, autovacuum does.
describe('the embedded database’s autovacuum', () => {
  const t = useTestApp();
  beforeAll(async () => {
    // Its timer stopped (and a pass under way finished): the test's passes are the only ones.
    await t.app.get(EmbeddedMaintenance).beforeApplicationShutdown();
  });

  /** What the planner knows of the tasks table (rows and pages at its last VACUUM or ANALYZE; -1 rows: never), and its dead rows. */
  const tasksStatistics = async () =>
    (
      await t.prisma.$queryRaw<{ rows: number; pages: number; dead: number }[]>`
        SELECT c.reltuples::float8 AS rows, c.relpages AS pages, s.n_dead_tup::int AS dead
          FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
         WHERE c.relname = 'tasks'`
    )[0];

  /** 600 more tasks, 12 pages: past the 8 a new table may grow by before it is done, and past a fifth more after. */
  async function grow() {
    const project = await createProject(t, 'Growing');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const tasks = Array.from({ length: 100 }, (_, n) => ({
        title: `Task ${i}.${n}`,
        description: 'Enough text to fill a few pages of the table.',
      }));
      const res = await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(201);
      ids.push(...res.body.tasks.map((task: { id: string }) => task.id));
    }
    return { project, ids };
  }

  /** Passes with no time limit until nothing is due; answers every statement run. */
  async function maintainAll(): Promise<string[]> {
    const maintenance = t.app.get(EmbeddedMaintenance);
    const statements: string[] = [];
    for (let pass = 0; pass < 20; pass++) {
      const ran = await maintenance.run(Number.POSITIVE_INFINITY);
      if (ran.length === 0) break;
      statements.push(...ran);
    }
    return statements;
  }

  (engine === 'pglite' ? it : it.skip)('analyzes a table once it has grown by a fifth since it was last done, and not before (PGlite)', async () => {
    const { project } = await grow();
    expect(await maintainAll()).toContain('ANALYZE tasks');
    const done = await tasksStatistics();
    expect(done.rows).toBeGreaterThanOrEqual(600);
    for (let i = 0; i < 5; i++) await project.api.post('/api/v1/tasks', { title: `One more ${i}` }).expect(201);
    expect(await maintainAll()).not.toContain('ANALYZE tasks');
    await grow();
    expect(await maintainAll()).toContain('ANALYZE tasks');
    expect((await tasksStatistics()).pages).toBeGreaterThan(done.pages);
  });

  (engine === 'pglite' ? it : it.skip)(
    'vacuums a table once a fifth of its rows are dead (PGlite)',
    async () => {
      const { project, ids } = await grow();
      await maintainAll();
      const before = await tasksStatistics();
      // Each change of a title leaves its old row version dead: a fifth of the tasks and 50 more.
      const changed = ids.slice(0, Math.ceil(before.rows * 0.2) + 60);
      for (const id of changed) await project.api.patch(`/api/v1/tasks/${id}`, { title: `Renamed ${id}` }).expect(200);
      expect(await maintainAll()).toContainEqual(expect.stringMatching(/^VACUUM( \(ANALYZE\))? tasks$/));
      expect((await tasksStatistics()).dead).toBeLessThan(changed.length / 10);
    },
    60_000,
  );

  (engine === 'pglite' ? it : it.skip)('holds the database for one statement a pass when its budget is spent (PGlite)', async () => {
    await grow(); // tasks, their history, events and labels grown: several tables due
    const ran = await t.app.get(EmbeddedMaintenance).run(0);
    expect(ran).toHaveLength(1);
    expect((await maintainAll()).length).toBeGreaterThan(0);
  });

  (engine === 'postgresql' ? it : it.skip)('leaves the tables to autovacuum (PostgreSQL)', async () => {
    await grow();
    expect(await t.app.get(EmbeddedMaintenance).run(Number.POSITIVE_INFINITY)).toEqual([]);
  });
});
