import type { Field, FieldTable } from '../src/common/fields/fields';
import { SPRINT_FIELDS } from '../src/sprints/sprint-fields';
import { TASK_FIELDS } from '../src/tasks/task-fields';
import { createProject, createTask, TestProject } from './support/fixtures';
import { startTestApp, TestApp } from './support/test-app';

// The field tables (src/tasks/task-fields.ts, src/sprints/sprint-fields.ts) drive the service's
// SQL, types and DTOs; these tests drive the service from them. Every field clients write is
// checked end to end from its row alone: a field added by its row, its column and its DTO
// properties (docs/extending.md) is tested here without a test of its own. References (ids of
// other records) are relations, tested by hand in tasks.e2e-spec.ts.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Values of a field that a body may send, and values it must refuse, from its kind's schema. */
function samples(field: Field): { valid: [unknown, unknown]; invalid: unknown[] } {
  const schema = field.kind.schema as {
    type?: string;
    format?: string;
    enum?: string[];
    minLength?: number;
    maxLength?: number;
    minimum?: number;
    maximum?: number;
  };
  if (schema.enum) return { valid: [schema.enum[schema.enum.length - 1], schema.enum[0]], invalid: ['nope', 3, ''] };
  if (schema.format === 'date') return { valid: ['2026-12-24', '2027-02-28'], invalid: ['2026-02-30', '24/12/2026', 20261224] };
  if (schema.type === 'number') {
    const [min, max] = [schema.minimum!, schema.maximum!];
    return { valid: [min, max], invalid: [min - 1, max + 1, String(max), (min + max) / 2 + 0.05] };
  }
  if (schema.type === 'string') {
    const [min, max] = [schema.minLength ?? 0, schema.maxLength!];
    return { valid: ['x'.repeat(Math.max(min, 1)), '😀'.repeat(max)], invalid: ['x'.repeat(max + 1), 42, ...(min > 0 ? [''] : [])] };
  }
  throw new Error(`No samples for a field of schema ${JSON.stringify(schema)}`);
}

const written = (table: FieldTable) =>
  Object.entries(table).filter(([, field]) => field.write && field.kind.schema.format !== 'uuid') as [string, Field][];

describe('the field tables', () => {
  let t: TestApp;
  let project: TestProject;
  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t, 'Field tables');
  });
  afterAll(() => t.close());

  const detail = async (taskId: string) => (await project.api.get(`/api/v1/tasks/${taskId}`).expect(200)).body.task;
  const lastEvent = async () => {
    const { events } = (await project.api.get('/api/v1/events?limit=1000').expect(200)).body;
    return events[events.length - 1];
  };

  describe.each(written(TASK_FIELDS))('task field %s, from its row', (name, field) => {
    const { valid, invalid } = samples(field);
    const shown = field.shown === 'list' || field.shown === 'detail';
    const required = !('default' in field.write!);
    const base = (value: unknown) => (name === 'title' ? { title: value } : { title: 'A task', [name]: value });

    it('is stored as sent by a create and a bulk create, and answered, read and carried by task.created as sent', async () => {
      const created = (await project.api.post('/api/v1/tasks', base(valid[0])).expect(201)).body.task;
      const [bulk] = (await project.api.post('/api/v1/tasks/bulk', { tasks: [base(valid[1])] }).expect(201)).body.tasks;
      if (!shown) return;
      expect([created[name], bulk[name]]).toEqual([valid[0], valid[1]]);
      expect((await detail(bulk.id))[name]).toEqual(valid[1]);
      expect((await lastEvent()).data.task[name]).toEqual(valid[1]);
    });

    it(required ? 'is required at creation' : 'takes its default when a create leaves it out', async () => {
      const body: Record<string, unknown> = { ...base(valid[0]) };
      delete body[name];
      if (required) {
        const res = await project.api.post('/api/v1/tasks', body).expect(400);
        expect(res.body.errors.map((error: { field: string }) => error.field)).toContain(name);
        return;
      }
      const task = (await project.api.post('/api/v1/tasks', body).expect(201)).body.task;
      if (shown) expect(task[name]).toEqual(field.write!.default ?? null);
    });

    it('is refused with 400 naming it when its value is invalid, in a create, a bulk item and a PATCH; nothing changes', async () => {
      const task = await createTask(project);
      for (const value of [...invalid, ...(field.nullable ? [] : [null])]) {
        const create = await project.api.post('/api/v1/tasks', base(value)).expect(400);
        expect([value, create.body.code, create.body.errors[0].field]).toEqual([value, 'validation_failed', name]);
        const bulk = await project.api.post('/api/v1/tasks/bulk', { tasks: [base(valid[0]), base(value)] }).expect(400);
        expect([value, bulk.body.errors[0].field]).toEqual([value, `tasks[1].${name}`]);
        if (field.write!.createOnly) continue;
        const patch = await project.api.patch(`/api/v1/tasks/${task.id}`, { [name]: value }).expect(400);
        expect([value, patch.body.code, patch.body.errors[0].field]).toEqual([value, 'validation_failed', name]);
      }
      expect(await detail(task.id)).toEqual(await detail(task.id));
      expect((await project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200)).body.history).toHaveLength(1);
    });

    it('is changed by a PATCH, recorded in history and task.updated from the value before; the same value again records nothing; null clears it where it may be null', async () => {
      if (field.write!.createOnly) return;
      const task = (await project.api.post('/api/v1/tasks', base(valid[0])).expect(201)).body.task;
      const changed = (await project.api.patch(`/api/v1/tasks/${task.id}`, { [name]: valid[1] }).expect(200)).body.task;
      if (shown) expect(changed[name]).toEqual(valid[1]);
      const change = { field: name, from: valid[0], to: valid[1] };
      expect((await lastEvent()).data.changes).toEqual([change]);
      const history = () => project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200);
      expect((await history()).body.history[0].changes).toEqual([change]);
      await project.api.patch(`/api/v1/tasks/${task.id}`, { [name]: valid[1] }).expect(200);
      expect((await history()).body.history).toHaveLength(2);
      // Another field's PATCH keeps it.
      await project.api.patch(`/api/v1/tasks/${task.id}`, name === 'title' ? { priority: 'high' } : { title: 'Other field' }).expect(200);
      if (shown) expect((await detail(task.id))[name]).toEqual(valid[1]);
      if (!field.nullable) return;
      const cleared = (await project.api.patch(`/api/v1/tasks/${task.id}`, { [name]: null }).expect(200)).body.task;
      if (shown) expect(cleared[name]).toBeNull();
      expect((await history()).body.history[0].changes).toEqual([{ field: name, from: valid[1], to: null }]);
    });
  });

  describe.each(written(SPRINT_FIELDS))('sprint field %s, from its row', (name, field) => {
    const { valid, invalid } = samples(field);
    // A window of its own for dates, so that startDate <= endDate holds whatever the order of samples.
    const body = (value: unknown) => ({ name: 'A sprint', ...(name === 'startDate' ? { endDate: '2027-12-31' } : {}), [name]: value });

    it('is stored as sent, changed by a PATCH (sprint.updated from the value before) and cleared by null where it may be', async () => {
      const sprint = (await project.api.post('/api/v1/sprints', body(valid[0])).expect(201)).body.sprint;
      expect(sprint[name]).toEqual(valid[0]);
      const changed = (await project.api.patch(`/api/v1/sprints/${sprint.id}`, { [name]: valid[1] }).expect(200)).body.sprint;
      expect(changed[name]).toEqual(valid[1]);
      expect((await lastEvent()).data.changes).toEqual([{ field: name, from: valid[0], to: valid[1] }]);
      if (field.nullable)
        expect((await project.api.patch(`/api/v1/sprints/${sprint.id}`, { [name]: null }).expect(200)).body.sprint[name]).toBeNull();
    });

    it('is refused with 400 naming it when its value is invalid', async () => {
      for (const value of [...invalid, ...(field.nullable ? [] : [null])]) {
        const res = await project.api.post('/api/v1/sprints', body(value)).expect(400);
        expect([value, res.body.errors[0].field]).toEqual([value, name]);
      }
    });
  });

  describe.each([
    ['tasks', TASK_FIELDS],
    ['sprints', SPRINT_FIELDS],
  ] as [string, FieldTable][])('the %s table and its rows', (tableName, table) => {
    it('has a column for every row, NULL exactly where the row says, as long as its text may be, of its enum’s values, in its number range', async () => {
      const columns = await t.prisma.$queryRawUnsafe<{ name: string; nullable: string; length: number | null; udt: string }[]>(
        `SELECT column_name::text AS name, is_nullable::text AS nullable, character_maximum_length::int AS length, udt_name::text AS udt
           FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
        tableName,
      );
      const checks = await t.prisma.$queryRawUnsafe<{ definition: string }[]>(
        `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`,
        tableName,
      );
      expect(
        Object.values(table)
          .map((field) => field.column)
          .sort(),
      ).toEqual(columns.map((column) => column.name).sort());
      for (const field of Object.values(table)) {
        const column = columns.find((candidate) => candidate.name === field.column)!;
        const schema = field.kind.schema as { maxLength?: number; enum?: string[]; minimum?: number; maximum?: number };
        expect([field.column, column.nullable === 'YES']).toEqual([field.column, field.nullable === true]);
        if (schema.maxLength !== undefined) expect([field.column, column.length]).toEqual([field.column, schema.maxLength]);
        if (schema.enum) {
          const labels = await t.prisma.$queryRawUnsafe<{ label: string }[]>(
            `SELECT enumlabel::text AS label FROM pg_enum WHERE enumtypid = $1::regtype ORDER BY enumsortorder`,
            column.udt,
          );
          expect(labels.map((row) => row.label)).toEqual(schema.enum);
        }
        if (schema.minimum !== undefined) {
          // The database holds the range too: a CHECK naming the column, its minimum and its maximum.
          const check = checks.find(({ definition }) => definition.includes(field.column));
          expect([field.column, check?.definition]).toEqual([field.column, expect.stringMatching(new RegExp(`>= \\(?${schema.minimum}`))]);
          expect(check?.definition).toMatch(new RegExp(`<= \\(?${schema.maximum}`));
        }
      }
    });
  });

  it('documents every written task field in the create and PATCH bodies, and every shown one in the answers, as its row says', async () => {
    const { schemas } = (await t.http.get('/docs/openapi.json').expect(200)).body.components;
    const documented = (property: Json, field: Field, nullable = field.nullable) => {
      const { description: _description, ...schema } = field.kind.schema as Record<string, unknown>;
      const type = nullable && schema.type ? { type: [schema.type, 'null'] } : {};
      expect(property).toMatchObject({ ...schema, ...type });
    };
    for (const [name, field] of Object.entries(TASK_FIELDS as FieldTable)) {
      if (field.write) documented(schemas.CreateTaskDto.properties[name], field);
      if (field.write && !field.write.createOnly) documented(schemas.UpdateTaskDto.properties[name], field);
      if (field.shown === 'list') documented(schemas.TaskDto.properties[name], field);
      if (field.shown === 'detail') documented(schemas.TaskDetailDto.properties[name], field);
      // What only the trash shows is what puts a task there (deletedAt): never null in it.
      if (field.shown === 'trash') documented(schemas.TrashedTaskDto.properties[name], field, false);
    }
  });
});
