import { fieldRuleDifferences } from '../src/common/fields/field-rules';
import { validate } from 'class-validator';
import {
  bodyField,
  calendarDate,
  clientWrite,
  decimal,
  type Field,
  type FieldKind,
  type FieldTable,
  integer,
  oneOf,
  text,
  url,
} from '../src/common/fields/fields';
import { COMMENT_FIELDS } from '../src/comments/comment-fields';
import { commentKeys } from '../src/comments/comment-view.sql';
import { FIELD_TABLES } from '../src/field-tables';
import { Prisma } from '../src/generated/prisma/client';
import { SPRINT_FIELDS } from '../src/sprints/sprint-fields';
import { TASK_FIELDS } from '../src/tasks/task-fields';
import { taskKeys } from '../src/tasks/task-view.sql';
import { createTask, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

// The field tables (src/tasks/task-fields.ts, src/sprints/sprint-fields.ts) drive the service's
// SQL, types and DTOs; these tests drive the service from them. Every field clients write is
// checked end to end from its row alone: a field added by its row, its column and its DTO
// properties (docs/extending.md) is tested here without a test of its own. References (ids of
// other records) are relations, tested by hand in tasks.e2e-spec.ts.

/**
 * Values of a field that a body may send, and values it must refuse, from its kind's schema.
 * The database must refuse each refused value it could store (of the column's JSON type), by its
 * column type or a CHECK, except those named `apiOnly`, with the reason why it may not.
 */
function samples(field: Field): { valid: [unknown, unknown]; invalid: unknown[]; apiOnly: unknown[] } {
  const schema = field.kind.schema as {
    type?: string;
    format?: string;
    enum?: string[];
    minLength?: number;
    maxLength?: number;
    minimum?: number;
    maximum?: number;
    pattern?: string;
  };
  if (schema.enum) return { valid: [schema.enum[schema.enum.length - 1], schema.enum[0]], invalid: ['nope', 3, ''], apiOnly: [] };
  if (schema.format === 'date') return { valid: ['2026-12-24', '2027-02-28'], invalid: ['2026-02-30', '24/12/2026', 20261224], apiOnly: [] };
  if (schema.type === 'number' || schema.type === 'integer') {
    const [min, max] = [schema.minimum!, schema.maximum!];
    // One decimal place more than the kind allows: a numeric column rounds it to its scale.
    const tooPrecise = schema.type === 'integer' ? min + 0.5 : (min + max) / 2 + 0.05;
    return { valid: [min, max], invalid: [min - 1, max + 1, String(max), tooPrecise], apiOnly: schema.type === 'number' ? [tooPrecise] : [] };
  }
  if (schema.format === 'uri') {
    const max = schema.maxLength!;
    const long = 'HTTP://x.example:8080/a%20b?q=1#f';
    const valid: [string, string] = ['https://example.com/page', long + '/'.repeat(max - long.length)];
    // The port is the WHATWG parser's to refuse: the database's pattern takes any digits.
    const apiOnly = ['https://example.com:99999/'];
    return {
      valid,
      invalid: [
        'x',
        'example.com',
        'ftp://example.com/',
        'javascript:alert(1)',
        'https://',
        'https://exa mple.com/',
        'https://example.com/é',
        valid[1] + '/',
        42,
        ...apiOnly,
      ],
      apiOnly,
    };
  }
  // Plain text: a kind of text with a format or a pattern of its own needs samples of its own.
  if (schema.type === 'string' && !schema.format && !schema.pattern) {
    const [min, max] = [schema.minLength ?? 0, schema.maxLength!];
    const blank = 'not_blank' in field.kind.checks(field.column) ? ['', ' \t '] : min > 0 ? [''] : [];
    const tooShort = min > 1 ? ['x'.repeat(min - 1)] : [];
    return { valid: ['x'.repeat(Math.max(min, 1)), '😀'.repeat(max)], invalid: ['x'.repeat(max + 1), 42, ...blank, ...tooShort], apiOnly: [] };
  }
  throw new Error(`No samples for a field of schema ${JSON.stringify(schema)}: give its kind samples here`);
}

/** The refused values of a field that the database must refuse too. */
function refusedByDatabase(field: Field): unknown[] {
  const { invalid, apiOnly } = samples(field);
  const type = field.kind.schema.type === 'string' ? 'string' : 'number';
  return invalid.filter((value) => typeof value === type && !apiOnly.includes(value));
}

const written = (table: FieldTable) =>
  Object.entries(table).filter(([, field]) => clientWrite(field) && field.kind.schema.format !== 'uuid') as [string, Field][];

describe('the field tables', () => {
  const t = useTestApp();
  const project = useProject(t, 'Field tables');

  const detail = async (taskId: string) => (await project.api.get(`/api/v1/tasks/${taskId}`).expect(200)).body.task;
  const lastEvent = async () => {
    const { events } = (await project.api.get('/api/v1/events?limit=1000').expect(200)).body;
    return events[events.length - 1];
  };

  describe.each(written(TASK_FIELDS))('task field %s, from its row', (name, field) => {
    const { valid, invalid } = samples(field);
    const shown = field.shown === 'list' || field.shown === 'detail';
    const write = clientWrite(field)!;
    const required = !('default' in write);
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
      if (shown) expect(task[name]).toEqual(write.default ?? null);
    });

    it('is refused with 400 naming it when its value is invalid, in a create, a bulk item and a PATCH; nothing changes', async () => {
      const task = await createTask(project);
      for (const value of [...invalid, ...(field.nullable ? [] : [null])]) {
        const create = await project.api.post('/api/v1/tasks', base(value)).expect(400);
        expect([value, create.body.code, create.body.errors[0].field]).toEqual([value, 'validation_failed', name]);
        const bulk = await project.api.post('/api/v1/tasks/bulk', { tasks: [base(valid[0]), base(value)] }).expect(400);
        expect([value, bulk.body.errors[0].field]).toEqual([value, `tasks[1].${name}`]);
        if (write.createOnly) continue;
        const patch = await project.api.patch(`/api/v1/tasks/${task.id}`, { [name]: value }).expect(400);
        expect([value, patch.body.code, patch.body.errors[0].field]).toEqual([value, 'validation_failed', name]);
      }
      expect(await detail(task.id)).toEqual(await detail(task.id));
      expect((await project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200)).body.history).toHaveLength(1);
    });

    it('is changed by a PATCH, recorded in history and task.updated from the value before; the same value again records nothing; null clears it where it may be null', async () => {
      if (write.createOnly) return;
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

  it('finds in the database every column its row needs, of its kind’s type, with its kind’s CHECK constraints (npm run db:migration writes them)', async () => {
    expect(Object.keys(FIELD_TABLES).sort()).toEqual(['attachments', 'comments', 'sprints', 'tasks']);
    const differences = await t.prisma.engine.withSession((session) => fieldRuleDifferences(session, FIELD_TABLES));
    expect(differences.map((difference) => difference.problem)).toEqual([]);
    for (const [tableName, table] of Object.entries(FIELD_TABLES)) {
      const columns = await t.prisma.$queryRawUnsafe<{ name: string }[]>(
        `SELECT column_name::text AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
        tableName,
      );
      const described = new Set(Object.values(table).map((field) => field.column));
      expect([tableName, columns.map((column) => column.name).filter((name) => !described.has(name))]).toEqual([tableName, []]);
    }
  });

  /** A row of each table, made through the API, to store values in. */
  const probeRow: Record<string, () => Promise<{ id: string }>> = {
    tasks: () => createTask(project),
    sprints: async () => (await project.api.post('/api/v1/sprints', { name: 'Probe' }).expect(201)).body.sprint,
    comments: async () =>
      (await project.api.post(`/api/v1/tasks/${(await createTask(project)).id}/comments`, { body: 'Probe' }).expect(201)).body.comment,
  };

  describe.each([
    ['tasks', TASK_FIELDS],
    ['sprints', SPRINT_FIELDS],
    ['comments', COMMENT_FIELDS],
  ] as [string, FieldTable][])('the %s table', (tableName, table) => {
    it.each(written(table))(
      'refuses in the database what the API refuses of %s (its column type or its kind’s CHECKs), but what the kind says only the API refuses',
      async (_name, field) => {
        const row = await probeRow[tableName]();
        for (const value of refusedByDatabase(field)) {
          const stored = t.prisma.sql.$executeRaw(
            Prisma.sql`UPDATE ${Prisma.raw(tableName)} SET ${Prisma.raw(field.column)} = ${value}::${Prisma.raw(field.kind.sqlType)} WHERE id = ${row.id}::uuid`,
          );
          const whenStored = `the database stored ${JSON.stringify(value)}, which the API refuses: give the kind a CHECK (FieldKind.checks) or name the value apiOnly here`;
          // Class 22: the column's type refused it (too long, not a date, not of the enum); 23514: a CHECK did.
          await expect(stored.then(() => whenStored)).rejects.toMatchObject({ code: expect.stringMatching(/^(22...|23514)$/) });
        }
      },
    );
  });

  // Every kind clients write, whether or not a field uses it yet: the API (its row's validators)
  // and the database (its column type and CHECKs, on a scratch table) take its valid samples, and
  // refuse its invalid ones (the database: all it could store, but its apiOnly ones).
  describe.each([
    ['text(1, 200, { notBlank: true })', text(1, 200, { notBlank: true })],
    ['text(0, 1000)', text(0, 1000)],
    ['text(3, 10)', text(3, 10)],
    ['url(2000)', url(2000)],
    ['integer(0, 1000)', integer(0, 1000)],
    ['integer(-5, 5)', integer(-5, 5)],
    ['decimal(0, 1000, 1)', decimal(0, 1000, 1)],
    ["oneOf(TASK_PRIORITIES, 'task_priority')", oneOf(['urgent', 'high', 'medium', 'low', 'none'], 'task_priority')],
    ['calendarDate()', calendarDate()],
  ] as [string, FieldKind<unknown>][])('the kind %s', (_name, kind) => {
    const field: Field = { column: 'value', kind, write: {}, shown: 'list' };

    it('is valid to the API for its valid samples, and invalid for its invalid ones', async () => {
      class Probe {
        value: unknown;
      }
      bodyField(field)(Probe.prototype, 'value');
      const verdicts = async (values: unknown[]) =>
        Promise.all(values.map(async (value) => [value, (await validate(Object.assign(new Probe(), { value }))).length === 0]));
      const { valid, invalid } = samples(field);
      expect(await verdicts(valid)).toEqual(valid.map((value) => [value, true]));
      expect(await verdicts(invalid)).toEqual(invalid.map((value) => [value, false]));
    });

    it('is stored by the database for its valid samples, and refused for the invalid ones it could store', async () => {
      const stored = await t.prisma.engine.withSession(async (session) => {
        await session.exec('BEGIN');
        try {
          await session.exec(`CREATE TEMPORARY TABLE kind_probe (value ${kind.columnType})`);
          for (const [suffix, predicate] of Object.entries(kind.checks('value'))) {
            await session.exec(`ALTER TABLE kind_probe ADD CONSTRAINT "kind_probe_${suffix}" CHECK (${predicate})`);
          }
          const store = async (value: unknown) => {
            await session.exec('SAVEPOINT probe');
            try {
              await session.query(`INSERT INTO kind_probe (value) VALUES ($1::${kind.sqlType})`, [value]);
              return true;
            } catch {
              await session.exec('ROLLBACK TO SAVEPOINT probe');
              return false;
            }
          };
          const verdicts: [unknown, boolean][] = [];
          for (const value of [...samples(field).valid, ...refusedByDatabase(field)]) verdicts.push([value, await store(value)]);
          return verdicts;
        } finally {
          await session.exec('ROLLBACK');
        }
      });
      expect(stored).toEqual([...samples(field).valid.map((value) => [value, true]), ...refusedByDatabase(field).map((value) => [value, false])]);
    });
  });

  it('answers a task with exactly the keys TASK_FIELDS and TASK_RELATION_VIEWS declare: in lists, in full, in the trash and in events', async () => {
    const task = await createTask(project, { title: 'Keys' });
    const keys = (value: object) => Object.keys(value).sort();
    const listed = (await project.api.get('/api/v1/tasks?limit=1').expect(200)).body.tasks[0];
    expect([listed.id, keys(listed)]).toEqual([task.id, taskKeys('list').sort()]);
    expect(keys(await detail(task.id))).toEqual(taskKeys('detail').sort());
    expect(keys((await lastEvent()).data.task)).toEqual(taskKeys('detail').sort());
    await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
    expect(keys((await lastEvent()).data.task)).toEqual(taskKeys('trash').sort());
    const trashed = (await project.api.get('/api/v1/trash?limit=1').expect(200)).body.tasks[0];
    expect([trashed.id, keys(trashed)]).toEqual([task.id, taskKeys('trash').sort()]);
  });

  it('answers a comment with exactly the keys COMMENT_FIELDS and COMMENT_RELATION_VIEWS declare: created, listed, read and in events', async () => {
    const task = await createTask(project, { title: 'Comment keys' });
    const keys = (value: object) => Object.keys(value).sort();
    const created = (await project.api.post(`/api/v1/tasks/${task.id}/comments`, { body: 'Keys' }).expect(201)).body.comment;
    expect(keys(created)).toEqual(commentKeys().sort());
    expect(keys((await project.api.get(`/api/v1/tasks/${task.id}/comments`).expect(200)).body.comments[0])).toEqual(commentKeys().sort());
    expect(keys((await lastEvent()).data.comment)).toEqual(commentKeys().sort());
  });

  it('documents the comment’s written fields in its create and PATCH bodies, and its shown ones in its answers, as its rows say', async () => {
    const { schemas } = (await t.http.get('/docs/openapi.json').expect(200)).body.components;
    for (const [name, field] of Object.entries(COMMENT_FIELDS as FieldTable)) {
      const { description: _description, ...schema } = field.kind.schema as Record<string, unknown>;
      const write = clientWrite(field);
      // A body never sends null where the row says it may not clear the field (a comment's text).
      const inBodies = field.nullable && write?.clearable !== false && schema.type ? { type: [schema.type, 'null'] } : {};
      if (write) expect({ name, ...schemas.CreateCommentDto.properties[name] }).toMatchObject({ name, ...schema, ...inBodies });
      if (write && !write.createOnly) expect({ name, ...schemas.UpdateCommentDto.properties[name] }).toMatchObject({ name, ...schema, ...inBodies });
      if (field.shown === 'list') {
        const shown = field.nullable && schema.type ? { type: [schema.type, 'null'] } : {};
        expect({ name, ...schemas.CommentDto.properties[name] }).toMatchObject({ name, ...schema, ...shown });
      }
    }
    expect(schemas.CreateCommentDto.properties.body.type).toBe('string');
  });

  it('documents every written task field in the create and PATCH bodies, and every shown one in the answers, as its row says', async () => {
    const { schemas } = (await t.http.get('/docs/openapi.json').expect(200)).body.components;
    const documented = (dto: string, name: string, field: Field, nullable = field.nullable) => {
      const { description: _description, ...schema } = field.kind.schema as Record<string, unknown>;
      const type = nullable && schema.type ? { type: [schema.type, 'null'] } : {};
      expect({ property: `${dto}.${name}`, ...schemas[dto].properties[name] }).toMatchObject({ property: `${dto}.${name}`, ...schema, ...type });
    };
    for (const [name, field] of Object.entries(TASK_FIELDS as FieldTable)) {
      const write = clientWrite(field);
      if (write) documented('CreateTaskDto', name, field);
      if (write && !write.createOnly) documented('UpdateTaskDto', name, field);
      if (field.shown === 'list') documented('TaskDto', name, field);
      if (field.shown === 'detail') documented('TaskDetailDto', name, field);
      // What only the trash shows is what puts a task there (deletedAt): never null in it.
      if (field.shown === 'trash') documented('TrashedTaskDto', name, field, false);
    }
  });
});

// A text kind would take "x" as a URL, in the API and in the database: nothing else can tell a
// URL field from a text field, so its name decides (docs/extending.md, The kinds).
describe('the field tables’ URL fields', () => {
  const namedLikeAUrl = Object.entries(FIELD_TABLES).flatMap(([tableName, table]) =>
    Object.entries(table)
      .filter(([name]) => /(url|uri|link|href)$/i.test(name))
      .map(([name, field]) => [`${tableName}.${name}`, field] as [string, Field]),
  );

  it('gives every field named like a URL or a link (…Url, …Uri, …Link, …Href) the url kind', () => {
    const notUrls = namedLikeAUrl
      .filter(([, field]) => !('http_url' in field.kind.checks(field.column)))
      .map(([name]) => `${name} is named like a URL but is not of the url(max) kind: give it url(max), not text(...)`);
    expect(notUrls).toEqual([]);
  });
});
