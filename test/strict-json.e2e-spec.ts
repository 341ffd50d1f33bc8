import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Test } from 'supertest';
import { ADMIN_TOKEN } from './support/test-database';
import { createTask, NO_SUCH_ID, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

// decisions.md section 17, "Bad input is bad input": what JSON.parse accepts silently is refused
// with 400 before any validation, for every body and every text field. The operations and their
// fields come from the served OpenAPI document, so a field or body added later is covered too.

type Segment = string | number;

interface BodyOperation {
  method: 'post' | 'patch' | 'put' | 'delete';
  path: string;
  admin: boolean;
  /** Each string of the body (properties, items of arrays, at any depth), as a path into it. */
  fields: Segment[][];
}

interface SchemaNode {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  oneOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  allOf?: SchemaNode[];
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema: SchemaNode }> }; security?: Record<string, unknown>[] }>>;
  components: { schemas: Record<string, SchemaNode> };
}

function bodyOperations(document: OpenApiDocument): BodyOperation[] {
  const operations: BodyOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['post', 'patch', 'put', 'delete'] as const) {
      const schema = item[method]?.requestBody?.content?.['application/json']?.schema;
      if (!schema) continue;
      const admin = (item[method]!.security ?? []).some((requirement) => 'admin-token' in requirement);
      operations.push({ method, path, admin, fields: [...stringFields(document, schema, [], new Set())] });
    }
  }
  return operations;
}

/** Every place a string can stand in a body of `schema`; an array's is its second item, to check the index named. */
function* stringFields(document: OpenApiDocument, schema: SchemaNode, at: Segment[], seen: Set<string>): Generator<Segment[]> {
  if (schema.$ref) {
    if (seen.has(schema.$ref)) return;
    const name = schema.$ref.replace('#/components/schemas/', '');
    yield* stringFields(document, document.components.schemas[name], at, new Set([...seen, schema.$ref]));
    return;
  }
  const branches = [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])];
  const fromBranches = branches.flatMap((branch) => [...stringFields(document, branch, at, seen)]);
  const unique = new Map(fromBranches.map((field) => [JSON.stringify(field), field]));
  yield* unique.values();
  const types = [schema.type ?? []].flat();
  if (types.includes('string')) yield at;
  if (schema.items) yield* stringFields(document, schema.items, [...at, 1], seen);
  for (const [property, propertySchema] of Object.entries(schema.properties ?? {})) {
    yield* stringFields(document, propertySchema, [...at, property], seen);
  }
}

/** How the API names a field: `tasks[1].title`. */
function fieldName(path: Segment[]): string {
  return path.reduce<string>((name, segment) => (typeof segment === 'number' ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment), '');
}

/** JSON text that holds `inner` (JSON text) at `path`; earlier items of an array are null. */
function wrap(path: Segment[], inner: string): string {
  return path.reduceRight<string>(
    (text, segment) =>
      typeof segment === 'number' ? `[${[...Array<string>(segment).fill('null'), text].join(',')}]` : `{${JSON.stringify(segment)}:${text}}`,
    inner,
  );
}

/** The objects of a body that hold its fields: the body itself, and each object further in. */
function objectPaths(fields: Segment[][]): Segment[][] {
  const paths = new Map<string, Segment[]>([['[]', []]]);
  for (const field of fields) {
    for (let end = 1; end < field.length; end++) {
      if (typeof field[end] === 'string') paths.set(JSON.stringify(field.slice(0, end)), field.slice(0, end));
    }
  }
  return [...paths.values()];
}

describe('bad input is refused before any validation (decisions.md section 17)', () => {
  const t = useTestApp();
  const project = useProject(t);
  let operations: BodyOperation[];
  let ids: Record<string, string>;
  beforeAll(async () => {
    operations = bodyOperations((await t.http.get('/docs/openapi.json').expect(200)).body);
    const task = await createTask(project);
    const sprint = (await project.api.post('/api/v1/sprints', { name: 'Sprint' }).expect(201)).body.sprint;
    const key = await project.issueKey([], 'Another key');
    ids = {
      taskId: task.id,
      sprintId: sprint.id,
      projectId: project.id,
      labelId: project.labels[0].id,
      membershipId: project.members[0].membershipId,
      keyId: key.id,
    };
  });

  /** Sends `body` (JSON text or bytes) as application/json to the operation, with the credentials it takes. */
  function send(operation: BodyOperation, body: string | Buffer): Test {
    const url = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? NO_SUCH_ID);
    const token = operation.admin ? ADMIN_TOKEN : project.key;
    const request = t.http[operation.method](url).set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json');
    // Bytes as they are: superagent would write a Buffer as JSON ({"type":"Buffer",...}).
    return request.serialize((bytes: unknown) => bytes as string).send(body);
  }

  /** Every row of the tables a body could change, as counts, and the project's events: equal before and after means nothing was stored. */
  async function stored(): Promise<Record<string, unknown>> {
    const p = t.prisma;
    const [projects, tasks, sprints, labels, members, keys, webhooks, events, history, latestTask] = await Promise.all([
      p.project.count(),
      p.task.count(),
      p.sprint.count(),
      p.label.count(),
      p.membership.count(),
      p.apiKey.count({ where: { revokedAt: null } }),
      p.webhook.count(),
      p.event.count(),
      p.historyEntry.count(),
      p.task.findFirst({ orderBy: { updatedAt: 'desc' }, select: { updatedAt: true } }),
    ]);
    return { projects, tasks, sprints, labels, members, keys, webhooks, events, history, latestTask };
  }

  async function expectRefusedEverywhere(
    cases: (operation: BodyOperation) => { body: string | Buffer; code: string; field?: string }[],
  ): Promise<number> {
    const before = await stored();
    let sent = 0;
    for (const operation of operations) {
      for (const { body, code, field } of cases(operation)) {
        const res = await send(operation, body);
        const what = `${operation.method.toUpperCase()} ${operation.path} ${typeof body === 'string' ? body.slice(0, 120) : '(bytes)'}`;
        expect({ what, status: res.status, code: res.body.code }).toEqual({ what, status: 400, code });
        if (field !== undefined) expect({ what, field: res.body.errors?.[0]?.field }).toEqual({ what, field });
        sent++;
      }
    }
    expect(await stored()).toEqual(before);
    return sent;
  }

  it('answers a lone surrogate in any text field with 400 validation_failed naming the field, and stores nothing', async () => {
    // The bodies and fields found in the document, admin bodies included.
    const fields = operations.flatMap((operation) => operation.fields.map((field) => `${operation.method} ${operation.path} ${fieldName(field)}`));
    expect(fields).toEqual(
      expect.arrayContaining([
        'post /api/v1/tasks title',
        'post /api/v1/tasks labelIds[1]',
        'post /api/v1/tasks/bulk tasks[1].title',
        'patch /api/v1/tasks/{taskId} description',
        'patch /api/v1/sprints/{sprintId} goal',
        'post /admin/v1/projects name',
        'post /admin/v1/projects/{projectId}/keys permissions[1]',
      ]),
    );
    await expectRefusedEverywhere((operation) =>
      operation.fields.map((field) => ({ body: wrap(field, '"a\\ud800b"'), code: 'validation_failed', field: fieldName(field) })),
    );
    // After the key check, as every body problem.
    await t.http.post('/api/v1/tasks').set('Content-Type', 'application/json').send('{"title":"\\ud800"}').expect(401);
  });

  it('answers bytes that are not UTF-8 in any text field with 400 validation_failed naming the field, and stores nothing', async () => {
    await expectRefusedEverywhere((operation) =>
      operation.fields.map((field) => {
        const [head, tail] = wrap(field, '"a#b"').split('#');
        return {
          body: Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]),
          code: 'validation_failed',
          field: fieldName(field),
        };
      }),
    );
  });

  it('answers bytes that are not UTF-8 just before an escaped low surrogate as not UTF-8, never as the pair they would make', async () => {
    // 0xFF then `\udc00`: were the invalid byte read as a high surrogate, the two would make U+10000.
    const notUtf8Then = (head: string, tail: string) => Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]);
    await expectRefusedEverywhere((operation) =>
      operation.fields.map((field) => {
        const [head, tail] = wrap(field, '"#\\udc00"').split('#');
        return { body: notUtf8Then(head, tail), code: 'validation_failed', field: fieldName(field) };
      }),
    );
    const postTask = (body: Buffer) =>
      t.http
        .post('/api/v1/tasks')
        .set('Authorization', `Bearer ${project.key}`)
        .set('Content-Type', 'application/json')
        .serialize((bytes: unknown) => bytes as string)
        .send(body);
    const inKey = await postTask(notUtf8Then('{"title":"x","', '\\udc00":1}'));
    expect(inKey.body).toMatchObject({ status: 400, code: 'validation_failed', errors: [{ field: '\ufffd\udc00' }] });
    const outside = await postTask(notUtf8Then('{"title":"x"', '}'));
    expect([outside.status, outside.body.code]).toEqual([400, 'malformed_json']);
    // A U+FFFD that was sent, before an escaped low surrogate: a lone surrogate, named as such.
    const sent = await project.api.post('/api/v1/tasks', '{"title":"\ufffd\\udc00"}').set('Content-Type', 'application/json');
    expect(sent.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'title' }] });
  });

  it('answers a key twice in one object with 400 malformed_json naming it, and stores nothing', async () => {
    await expectRefusedEverywhere((operation) =>
      operation.fields.map((field) => {
        const last = field.findLastIndex((segment) => typeof segment === 'string');
        const key = JSON.stringify(field[last]);
        return { body: wrap(field.slice(0, last), `{${key}:"x",${key}:"y"}`), code: 'malformed_json', field: fieldName(field.slice(0, last + 1)) };
      }),
    );
  });

  it('answers the keys __proto__, constructor and prototype anywhere with 400 unknown_field naming them, and stores nothing', async () => {
    await expectRefusedEverywhere((operation) =>
      objectPaths(operation.fields).flatMap((at) =>
        [
          ['__proto__', '{"title":"polluted"}'],
          ['constructor', '{"prototype":{"title":"polluted"}}'],
          ['prototype', '{"title":"polluted"}'],
        ].map(([key, value]) => ({ body: wrap(at, `{"${key}":${value}}`), code: 'unknown_field', field: fieldName([...at, key]) })),
      ),
    );
    expect(({} as Record<string, unknown>).title).toBeUndefined();
  });

  it('answers a key named like what every object inherits (toString, valueOf, hasOwnProperty) anywhere with 400 unknown_field, and stores nothing', async () => {
    await expectRefusedEverywhere((operation) =>
      objectPaths(operation.fields).flatMap((at) =>
        ['toString', 'valueOf', 'hasOwnProperty'].map((key) => ({
          body: wrap(at, `{"${key}":1}`),
          code: 'unknown_field',
          field: fieldName([...at, key]),
        })),
      ),
    );
  });

  it('answers a query parameter named like what every object inherits with 400 unknown_field, on every list', async () => {
    const task = (await project.api.post('/api/v1/tasks', { title: 'Queried' }).expect(201)).body.task;
    for (const path of [
      '/api/v1/tasks',
      '/api/v1/trash',
      '/api/v1/events',
      `/api/v1/tasks/${task.id}/history`,
      `/api/v1/tasks/${task.id}/comments`,
      '/api/v1/reports/velocity',
    ]) {
      for (const name of ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty']) {
        const res = await project.api.get(`${path}?${name}=1`);
        expect([path, name, res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([path, name, 400, 'unknown_field', name]);
      }
    }
  });

  it('answers a body nested deeper than 64 levels with 400 malformed_json, and stores nothing; 64 levels are read', async () => {
    await expectRefusedEverywhere(() => [{ body: `{"a":${'['.repeat(64)}${']'.repeat(64)}}`, code: 'malformed_json' }]);
    const res = await project.api
      .post('/api/v1/tasks', `{"title":"x","a":${'['.repeat(63)}${']'.repeat(63)}}`)
      .set('Content-Type', 'application/json');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'unknown_field', errors: [{ field: 'a' }] });
  });

  it('answers an object of more than 1000 keys with 400 malformed_json, and stores nothing; 1000 are read', async () => {
    const keys = (count: number) => Array.from({ length: count }, (_, i) => `"k${i}":0`).join(',');
    await expectRefusedEverywhere(() => [{ body: `{${keys(1001)}}`, code: 'malformed_json' }]);
    await expectRefusedEverywhere(() => [{ body: `{"tasks":[{${keys(1001)}}]}`, code: 'malformed_json' }]);
    const res = await project.api.post('/api/v1/tasks', `{"title":"x",${keys(999)}}`).set('Content-Type', 'application/json');
    expect([res.status, res.body.code]).toEqual([400, 'unknown_field']);
  });

  it('lists at most the first 100 problems in errors, and says how many more there are', async () => {
    const keys = Array.from({ length: 1000 }, (_, i) => `"k${i}":0`).join(',');
    const res = await project.api.post('/api/v1/tasks', `{${keys}}`).set('Content-Type', 'application/json').expect(400);
    expect(res.body.code).toBe('unknown_field');
    expect(res.body.errors).toHaveLength(100);
    expect(res.body.errors[0]).toEqual({ field: 'k0', message: 'is not a field of this request' });
    expect(res.body.detail).toMatch(/and 900 more problems$/);
    expect(res.body.detail.length).toBeLessThan(5000);
  });

  it('names a lone surrogate of either kind, anywhere in a string, and keeps a pair (an emoji) as it was sent', async () => {
    for (const text of ['\\udc00', 'ab\\ud800', '\\udc00\\ud800', '\\ud83d']) {
      const res = await project.api.post('/api/v1/tasks', `{"title":"${text}"}`).set('Content-Type', 'application/json').expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'title' }] });
    }
    const created = await project.api
      .post('/api/v1/tasks', '{"title":"ship \\ud83d\\ude80 \ufffd"}')
      .set('Content-Type', 'application/json')
      .expect(201);
    expect(created.body.task.title).toBe('ship \u{1F680} \ufffd');
  });

  it('answers a lone surrogate in a key with 400 validation_failed', async () => {
    const res = await project.api.post('/api/v1/tasks', '{"title":"x","\\ud800":1}').set('Content-Type', 'application/json').expect(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('answers a query value that is not UTF-8 once percent-decoded with 400 validation_failed naming it', async () => {
    for (const value of ['%FF', '%ED%A0%80', '%E2%82', 'ok%C3']) {
      const res = await project.api.get(`/api/v1/tasks?q=${value}`).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'q' }] });
    }
    // A U+FFFD that was sent, and a % that encodes nothing, are text like any other.
    await project.api.get('/api/v1/tasks?q=%EF%BF%BD').expect(200);
    await project.api.get('/api/v1/tasks?q=100%').expect(200);
    await t.http.get('/api/v1/tasks?q=%FF').expect(401);
  });
});

describe('/health while deep bodies arrive (decisions.md section 17)', () => {
  const t = useTestApp();
  const project = useProject(t);
  let port: number;
  beforeAll(async () => {
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });

  /**
   * Sends the request's bytes as they are (little work for the test on the event loop it shares
   * with the server) and reads the answer until the server closes (Connection: close). Not
   * half-closed: Node aborts a request whose client has ended its side before the answer.
   */
  function sendRaw(request: Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
      socket.on('error', reject);
      socket.on('close', () => resolve(answer));
    });
  }

  it('keeps answering /health at once while 1 MiB bodies nested half a million levels deep arrive', async () => {
    const depth = 512 * 1024 - 8;
    const body = Buffer.from(`{"title":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${project.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const request = Buffer.concat([Buffer.from(head), body]);
    const before = await t.prisma.task.count();
    // Once before the timed round: what is measured is the service's answer to such bodies, not
    // the first compilation of the code that answers them.
    await sendRaw(request);
    const waits: number[] = [];
    let arriving = true;
    const settled = Promise.all(Array.from({ length: 6 }, () => sendRaw(request))).finally(() => (arriving = false));
    while (arriving) {
      const started = performance.now();
      await t.http.get('/health').expect(200);
      waits.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const answers = await settled;
    expect(waits.length).toBeGreaterThan(0);
    // Before the linear depth check, six such bodies stalled the process for 9 s (a stack overflow in
    // validation, each). The service's own work on one is now a few milliseconds; the bound leaves
    // room for a loaded test machine, where /health alone takes tens of milliseconds.
    expect(Math.max(...waits)).toBeLessThan(500);
    for (const answer of answers) {
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).code).toBe('malformed_json');
    }
    expect(await t.prisma.task.count()).toBe(before);
  });
});
