import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { AddressInfo } from 'node:net';
import { problemJson } from '../src/common/errors/problem-details.filter';
import { problemFromDatabaseError } from '../src/common/errors/database-errors';
import { ALL_PERMISSIONS } from '../src/auth/permissions';
import { asAdmin, createProject, createTask, NO_SUCH_ID, TestProject } from './support/fixtures';
import { OpenApiContract, withAnswersResolved, type Answer, type OpenApiDocument } from './support/openapi-contract';
import { taskKeys } from '../src/tasks/task-view.sql';
import { startTestApp, TestApp, useTestApp } from './support/test-app';

interface Operation {
  operationId: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; schema: { format?: string; type?: unknown; example?: unknown; anyOf?: unknown }; example?: unknown }[];
  requestBody?: { content: Record<string, { schema: { $ref?: string }; examples?: Record<string, { value: unknown }> }> };
  responses: Record<
    string,
    { content?: Record<string, { schema: { $ref?: string }; example?: Record<string, unknown> }>; headers?: Record<string, { $ref?: string }> }
  >;
  summary?: string;
  description?: string;
}

type Schema = { properties?: Record<string, Schema>; required?: string[]; format?: string; enum?: unknown[]; type?: unknown; $ref?: string };

describe('OpenAPI document', () => {
  let t: TestApp;
  let document: OpenApiDocument & { info: Record<string, unknown>; servers: unknown; tags: { name: string; description?: string }[] };
  let paths: Record<string, Record<string, Operation>>;
  let schemas: Record<string, Schema>;
  const operations = () =>
    Object.entries(paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ method, path, operation })));
  beforeAll(async () => {
    t = await startTestApp();
    document = (await t.http.get('/docs/openapi.json').expect(200)).body;
    // Answers as a client reads them: the shared ones (components/responses) in place.
    paths = withAnswersResolved(document).paths as typeof paths;
    schemas = (document.components as { schemas: typeof schemas }).schemas;
  });
  afterAll(() => t.close());

  const apiOperations: [string, string, string, string | null][] = [
    ['get', '/api/v1/tasks', 'listTasks', null],
    ['post', '/api/v1/tasks', 'createTask', 'tasks:create'],
    ['get', '/api/v1/tasks/{taskId}', 'getTask', null],
    ['patch', '/api/v1/tasks/{taskId}', 'updateTask', 'tasks:edit'],
    ['delete', '/api/v1/tasks/{taskId}', 'trashTask', 'tasks:delete'],
    ['post', '/api/v1/tasks/{taskId}/dependencies', 'addDependency', 'tasks:edit'],
    ['delete', '/api/v1/tasks/{taskId}/dependencies/{blockedById}', 'removeDependency', 'tasks:edit'],
    ['get', '/api/v1/tasks/{taskId}/history', 'listTaskHistory', null],
    ['get', '/api/v1/tasks/{taskId}/comments', 'listComments', null],
    ['post', '/api/v1/tasks/{taskId}/comments', 'createComment', 'comments:write'],
    ['get', '/api/v1/tasks/{taskId}/comments/{commentId}', 'getComment', null],
    ['patch', '/api/v1/tasks/{taskId}/comments/{commentId}', 'updateComment', 'comments:write'],
    ['delete', '/api/v1/tasks/{taskId}/comments/{commentId}', 'deleteComment', 'comments:write'],
    ['get', '/api/v1/tasks/{taskId}/comments/{commentId}/revisions', 'listCommentRevisions', null],
    ['get', '/api/v1/members', 'listMembers', null],
    ['get', '/api/v1/labels', 'listLabels', null],
    ['get', '/api/v1/sprints', 'listSprints', null],
    ['post', '/api/v1/sprints', 'createSprint', 'sprints:manage'],
    ['get', '/api/v1/sprints/{sprintId}', 'getSprint', null],
    ['patch', '/api/v1/sprints/{sprintId}', 'updateSprint', 'sprints:manage'],
    ['delete', '/api/v1/sprints/{sprintId}', 'deleteSprint', 'sprints:manage'],
    ['get', '/api/v1/trash', 'listTrash', null],
    ['post', '/api/v1/trash/{taskId}/restore', 'restoreTask', 'tasks:delete'],
    ['delete', '/api/v1/trash/{taskId}', 'purgeTask', 'tasks:delete'],
  ];

  it.each(apiOperations)(
    'documents %s %s as %s with the bearer key, its answers and problem+json errors',
    (method, path, operationId, permission) => {
      const operation = paths[path]?.[method];
      expect(operation).toBeDefined();
      expect(operation.operationId).toBe(operationId);
      expect(operation.security).toEqual([{ 'api-key': [] }]);
      expect(operation.summary).toEqual(expect.any(String));
      const body = operation.requestBody !== undefined ? ['413', '415'] : [];
      const errors = ['400', '401', '429', '500', ...body, ...(permission ? ['403'] : []), ...(method === 'get' ? [] : ['409'])];
      for (const status of errors) {
        expect(operation.responses[status]?.content?.['application/problem+json']?.schema.$ref).toBe('#/components/schemas/ProblemDto');
      }
      // Only the errors it can give: a body's where it takes one (a body sent to a route that takes none is 400).
      if (!body.length) expect(Object.keys(operation.responses)).not.toEqual(expect.arrayContaining(['413']));
      if (!body.length) expect(Object.keys(operation.responses)).not.toEqual(expect.arrayContaining(['415']));
      expect(Object.keys(operation.responses['429'].headers ?? {})).toContain('Retry-After');
      expect(Object.keys(operation.responses['401'].headers ?? {})).toContain('WWW-Authenticate');
      const success = Object.keys(operation.responses).find((status) => status.startsWith('2'));
      expect(success).toBeDefined();
      if (success !== '204') expect(operation.responses[success!].content?.['application/json']?.schema.$ref).toMatch(/Dto$/);
      if (['post', 'patch'].includes(method) && !path.endsWith('/restore')) {
        expect(operation.requestBody?.content['application/json'].schema.$ref).toMatch(/Dto$/);
      }
    },
  );

  it('documents the admin interface under its own tag, with the admin token scheme', () => {
    const admin = operations().filter(({ path }) => path.startsWith('/admin/'));
    expect(admin.map(({ method, path, operation }) => [method, path, operation.operationId])).toEqual([
      ['post', '/admin/v1/projects', 'createProject'],
      ['get', '/admin/v1/projects', 'listProjects'],
      ['get', '/admin/v1/projects/{projectId}', 'getProject'],
      ['post', '/admin/v1/projects/{projectId}/members', 'createMember'],
      ['patch', '/admin/v1/members/{membershipId}', 'updateMember'],
      ['post', '/admin/v1/projects/{projectId}/labels', 'createLabel'],
      ['patch', '/admin/v1/labels/{labelId}', 'updateLabel'],
      ['post', '/admin/v1/projects/{projectId}/keys', 'issueApiKey'],
      ['get', '/admin/v1/projects/{projectId}/keys', 'listApiKeys'],
      ['delete', '/admin/v1/keys/{keyId}', 'revokeApiKey'],
      ['post', '/admin/v1/sprints/{sprintId}/activate', 'activateSprint'],
      ['post', '/admin/v1/sprints/{sprintId}/close', 'closeSprint'],
    ]);
    for (const { operation } of admin) {
      expect(operation.security).toEqual([{ 'admin-token': [] }]);
      expect(operation.tags).toEqual(['admin']);
      expect(operation.responses['401']).toBeDefined();
      // Limited per client address (decisions.md section 21), with the RateLimit-* headers (x-answer-headers).
      expect(Object.keys(operation.responses['429'].headers ?? {})).toContain('Retry-After');
    }
    const schemes = (document.components as { securitySchemes: Record<string, { description: string; bearerFormat?: string }> }).securitySchemes;
    expect(schemes).toEqual({
      'api-key': expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      'admin-token': expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
  });

  it('lists the answers many operations share once, under components/responses, each operation referring to them', () => {
    const raw = (document.paths as Record<string, Record<string, { responses: Record<string, { $ref?: string }> }>>)['/api/v1/tasks'].get.responses;
    expect(raw['401']).toEqual({ $ref: '#/components/responses/Unauthenticated' });
    expect(raw['429']).toEqual({ $ref: '#/components/responses/RateLimited' });
    expect(raw['500']).toEqual({ $ref: '#/components/responses/Internal' });
    const shared = (document.components as { responses: Record<string, { description: string }> }).responses;
    expect(Object.keys(shared)).toEqual(expect.arrayContaining(['Unauthenticated', 'RateLimited', 'Internal', 'DatabaseUnavailable', 'NotModified']));
    // Short: one line each, naming the code.
    for (const [name, response] of Object.entries(shared)) expect([name, response.description]).toEqual([name, expect.not.stringContaining('\n')]);
  });

  it('documents X-Request-Id and the RateLimit-* headers once, at the root, for the answers that carry them', () => {
    const rules = (document as unknown as { 'x-answer-headers': { pathPrefixes: string[]; exceptStatuses: string[]; headers: object }[] })[
      'x-answer-headers'
    ];
    expect(rules.map((rule) => [rule.pathPrefixes, rule.exceptStatuses, Object.keys(rule.headers)])).toEqual([
      [['/'], [], ['X-Request-Id']],
      [['/api/v1', '/admin/v1'], ['500'], ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']],
    ]);
    const repeated = operations().filter(({ operation }) =>
      Object.values(operation.responses).some((response) =>
        Object.keys(response.headers ?? {}).some((name) => /^(X-Request-Id|RateLimit-)/.test(name)),
      ),
    );
    expect(repeated).toEqual([]);
  });

  it('documents only the errors an operation can give: 413 and 415 where it takes a body, so never on a GET', () => {
    for (const { method, path, operation } of operations()) {
      const statuses = Object.keys(operation.responses);
      const takesBody = operation.requestBody !== undefined;
      expect([method, path, statuses.includes('413'), statuses.includes('415')]).toEqual([method, path, takesBody, takesBody]);
      if (method === 'get') expect([method, path, takesBody]).toEqual([method, path, false]);
    }
  });

  it('documents 404 on an operation without a path id only where a reference in its body can name nothing', () => {
    const without = operations().filter(({ path, operation }) => !path.includes('{') && operation.responses['404']);
    expect(without.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([
      'post /api/v1/tasks',
      'post /api/v1/tasks/bulk',
      'post /api/v1/tasks/move',
    ]);
  });

  it('documents Location on every create of one resource', () => {
    for (const [path, operationId] of [
      ['/api/v1/tasks', 'createTask'],
      ['/api/v1/sprints', 'createSprint'],
      ['/api/v1/webhooks', 'createWebhook'],
      ['/admin/v1/projects', 'createProject'],
      ['/admin/v1/projects/{projectId}/members', 'createMember'],
      ['/admin/v1/projects/{projectId}/labels', 'createLabel'],
      ['/admin/v1/projects/{projectId}/keys', 'issueApiKey'],
    ]) {
      const operation = paths[path].post;
      expect([operation.operationId, Object.keys(operation.responses['201'].headers ?? {})]).toEqual([
        operationId,
        expect.arrayContaining(['Location']),
      ]);
    }
  });

  it('tells the two bearer schemes apart, and calls neither a JWT', () => {
    const schemes = (document.components as { securitySchemes: Record<string, { description: string; bearerFormat?: string }> }).securitySchemes;
    expect(schemes['api-key'].description).toMatch(/project key.*tsk_/);
    expect(schemes['admin-token'].description).toMatch(/ADMIN_TOKEN.*\/admin\/v1/);
    expect(schemes['admin-token'].bearerFormat).toBeUndefined();
    expect(JSON.stringify(schemes)).not.toMatch(/JWT/i);
  });

  it('describes every operation, with a summary on one line', () => {
    const undescribed = operations().filter(({ operation }) => !operation.description?.trim());
    expect(undescribed.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
    for (const { method, path, operation } of operations()) {
      expect([method, path, operation.summary]).toEqual([method, path, expect.stringMatching(/^[^\n]{3,}$/)]);
      expect(operation.description!.startsWith(operation.summary!)).toBe(true);
    }
  });

  it('fills in no query parameter: its examples are in its description, so Try it out lists everything at first', () => {
    const filled = operations().flatMap(({ method, path, operation }) =>
      (operation.parameters ?? [])
        .filter((parameter) => parameter.in === 'query' && (parameter.example !== undefined || parameter.schema.example !== undefined))
        .map((parameter) => `${method} ${path} ${parameter.name}`),
    );
    expect(filled).toEqual([]);
    const list = Object.fromEntries((paths['/api/v1/tasks'].get.parameters ?? []).map((parameter) => [parameter.name, parameter]));
    expect((list.status as { description?: string }).description).toContain('`todo,in_progress`');
    // A membershipId or `none`: one string, not a union Swagger UI shows as "string | (string | string)".
    expect(list.assigneeId.schema).toEqual({ type: 'string' });
  });

  it('types integers as integer: query parameters and sequence numbers', () => {
    const numbers = operations().flatMap(({ method, path, operation }) =>
      (operation.parameters ?? [])
        .filter((parameter) => parameter.schema.type === 'number')
        .map((parameter) => `${method} ${path} ${parameter.name}`),
    );
    expect(numbers).toEqual([]);
    const events = Object.fromEntries((paths['/api/v1/events'].get.parameters ?? []).map((parameter) => [parameter.name, parameter.schema.type]));
    expect(events).toMatchObject({ after: 'integer', limit: 'integer', wait: 'integer' });
    expect(schemas.EventDto.properties!.sequence.type).toBe('integer');
    expect(schemas.EventFeedDto.properties!.nextAfter.type).toBe('integer');
  });

  it('gives PATCH bodies no defaults (an absent field stays as it is), and create bodies theirs', () => {
    expect(schemas.CreateTaskDto.properties!.status).toMatchObject({ default: 'backlog' });
    expect(schemas.CreateTaskDto.properties!.priority).toMatchObject({ default: 'none' });
    for (const [name, schema] of Object.entries(schemas).filter(([name]) => name.startsWith('Update'))) {
      for (const [field, property] of Object.entries(schema.properties ?? {})) {
        expect([name, field, (property as { default?: unknown }).default]).toEqual([name, field, undefined]);
        expect([name, field, (property as { description?: string }).description ?? '']).not.toEqual([name, field, expect.stringMatching(/default/i)]);
      }
    }
  });

  it('serves Swagger UI keeping the authorization across reloads', async () => {
    const init = await t.http.get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toMatch(/"persistAuthorization":\s*true/);
  });

  it('documents the event stream as text/event-stream whose data are events, with Last-Event-ID and its refusals, and no ETag', () => {
    const stream = paths['/api/v1/events/stream'].get as Operation & {
      responses: Record<string, { content?: Record<string, { schema: object; 'x-event-data'?: object }> }>;
    };
    expect(stream.operationId).toBe('streamEvents');
    expect(Object.keys(stream.responses['200'].content ?? {})).toEqual(['text/event-stream']);
    expect(stream.responses['200'].content!['text/event-stream']['x-event-data']).toEqual({ $ref: '#/components/schemas/EventDto' });
    expect(Object.keys(stream.responses['200'].headers ?? {})).toEqual(expect.arrayContaining(['Cache-Control', 'X-Accel-Buffering']));
    expect(Object.keys(stream.responses['200'].headers ?? {})).not.toContain('ETag');
    expect(stream.responses['304']).toBeUndefined();
    expect(stream.parameters?.map((parameter) => parameter.name)).toEqual(expect.arrayContaining(['after', 'types', 'Last-Event-ID']));
    for (const path of ['/api/v1/events', '/api/v1/events/stream']) {
      expect(paths[path].get.responses['400'].content?.['application/problem+json'].schema.$ref).toBe('#/components/schemas/EventFeedProblemDto');
      expect(paths[path].get.responses['410']).toBeDefined();
    }
    expect(schemas.EventFeedProblemDto.properties?.lastSequence).toBeDefined();
    expect(schemas.EventDataDto.properties).toEqual(expect.objectContaining({ label: expect.anything(), member: expect.anything() }));
    expect(schemas.EventDto.properties?.type.enum).toEqual(
      expect.arrayContaining(['label.created', 'label.updated', 'member.created', 'member.updated']),
    );
  });

  it('declares no key on the operations that need none', () => {
    for (const path of ['/health', '/metrics', '/ready']) {
      expect(paths[path].get.security).toEqual([]);
      expect(paths[path].get.responses['401']).toBeUndefined();
    }
    const withoutKey = operations().filter(({ operation }) => !operation.security?.length);
    expect(withoutKey.map(({ path }) => path).sort()).toEqual(['/', '/api/v1/attachment-downloads/{attachmentId}', '/health', '/metrics', '/ready']);
  });

  it('gives every operation a unique operationId that reads as a method name', () => {
    const ids = operations().map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z]+[A-Z][A-Za-z]*$/);
  });

  it('describes each tag it uses, where it is served, its contact, and no licence (UNLICENSED)', () => {
    const used = new Set(operations().flatMap(({ operation }) => operation.tags));
    expect(document.tags.map((tag) => tag.name).sort()).toEqual([...used].sort());
    for (const tag of document.tags) expect(tag.description).toEqual(expect.stringMatching(/^.{20}/));
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(document.info.license).toBeUndefined();
    expect(document.info.contact).toEqual({ name: expect.any(String) });
  });

  it('describes a key’s permissions as every permission there is (decisions.md sections 2, 14, 23 and 24)', () => {
    const permissions = schemas.CreateApiKeyDto.properties!.permissions as Schema & { description: string; items: Schema };
    expect(permissions.items.enum).toEqual([...ALL_PERMISSIONS]);
    for (const permission of ALL_PERMISSIONS)
      expect([permission, permissions.description]).toEqual([permission, expect.stringContaining(permission)]);
  });

  it('says that assignee and sprint may be null, and what history values are', () => {
    expect(document.openapi).toBe('3.1.0');
    for (const name of ['TaskDto', 'TaskDetailDto', 'TrashedTaskDto']) {
      expect(schemas[name].properties!.assignee).toEqual({ oneOf: [{ $ref: '#/components/schemas/MemberDto' }, { type: 'null' }] });
      expect(schemas[name].properties!.sprint).toEqual({ oneOf: [{ $ref: '#/components/schemas/SprintRefDto' }, { type: 'null' }] });
    }
    for (const side of ['from', 'to']) {
      expect(schemas.FieldChangeDto.properties![side]).toMatchObject({
        oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'array', items: { type: 'string' } }, { type: 'null' }],
      });
    }
    // No 3.0 leftovers: `nullable` means nothing in 3.1.
    expect(JSON.stringify(document)).not.toContain('"nullable"');
  });

  it('gives every id its uuid format, every status its values, every date and instant its format', () => {
    const checked: string[] = [];
    for (const [schemaName, schema] of Object.entries(schemas)) {
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        const where = `${schemaName}.${name}`;
        const scalar = property.format !== undefined || property.enum !== undefined || property.type !== undefined ? property : undefined;
        if (/^(id|\w+Id)$/.test(name) && scalar) {
          expect([where, scalar.format]).toEqual([where, 'uuid']);
          checked.push(where);
        } else if (name === 'labelIds') {
          expect([where, (property as { items?: Schema }).items?.format]).toEqual([where, 'uuid']);
        } else if (name === 'status' && !schemaName.endsWith('ProblemDto') && scalar) {
          // (ProblemDto.status, and that of the problems that extend it, is the HTTP status.)
          expect([where, Array.isArray(scalar.enum)]).toEqual([where, true]);
        } else if (/At$/.test(name)) {
          expect([where, property.format]).toEqual([where, 'date-time']);
        } else if (/Date$/.test(name)) {
          expect([where, property.format]).toEqual([where, 'date']);
        }
      }
    }
    expect(checked).toEqual(expect.arrayContaining(['TaskDto.id', 'TaskDto.projectId', 'MemberDto.membershipId', 'CreateTaskDto.assigneeId']));
    for (const { operation } of operations()) {
      for (const parameter of operation.parameters ?? []) if (parameter.in === 'path') expect(parameter.schema.format).toBe('uuid');
    }
  });

  it('describes what clients send: strict bodies, non-empty PATCH, no read-only fields', () => {
    expect(schemas.CreateTaskDto.required).toEqual(['title']);
    expect(Object.keys(schemas.UpdateTaskDto.properties!)).not.toContain('parentId');
    expect(schemas.UpdateTaskDto.required ?? []).toEqual([]);
    expect(Object.keys(schemas.CreateSprintDto.properties!)).not.toContain('status');
    expect(Object.keys(schemas.UpdateSprintDto.properties!).sort()).toEqual(['endDate', 'goal', 'name', 'startDate']);
    for (const name of [
      'CreateTaskDto',
      'UpdateTaskDto',
      'CreateSprintDto',
      'UpdateSprintDto',
      'AddDependencyDto',
      'CreateApiKeyDto',
      'CloseSprintDto',
    ]) {
      expect([name, (schemas[name] as { additionalProperties?: boolean }).additionalProperties]).toEqual([name, false]);
    }
    expect((schemas.UpdateTaskDto as { minProperties?: number }).minProperties).toBe(1);
    expect((schemas.UpdateSprintDto as { minProperties?: number }).minProperties).toBe(1);
  });

  it('describes every field of a task, in lists and in full', () => {
    // As TASK_FIELDS and TASK_RELATION_VIEWS declare them.
    const listFields = taskKeys('list');
    expect(Object.keys(schemas.TaskDto.properties!).sort()).toEqual([...listFields].sort());
    expect(schemas.TaskDto.required?.sort()).toEqual([...listFields].sort());
    expect(Object.keys(schemas.TaskDetailDto.properties!).sort()).toEqual(taskKeys('detail').sort());
    expect(Object.keys(schemas.TrashedTaskDto.properties!).sort()).toEqual(taskKeys('trash').sort());
    expect(Object.keys(schemas.TaskListDto.properties!).sort()).toEqual(['nextCursor', 'tasks', 'total']);
  });

  it('lists every query parameter of the task list', () => {
    const parameters = paths['/api/v1/tasks'].get.parameters ?? [];
    const names = parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
    expect(names.sort()).toEqual(
      [
        'status',
        'priority',
        'assigneeId',
        'sprintId',
        'labelId',
        'parentId',
        'q',
        'search',
        'filter',
        'dueAfter',
        'dueBefore',
        'updatedSince',
        'estimated',
        'sort',
        'limit',
        'cursor',
      ].sort(),
    );
    expect(parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name)).toEqual(['If-None-Match']);
  });

  it('gives examples that validate against their own schemas', () => {
    const ajv = new Ajv2020({ strict: false, allowUnionTypes: true });
    addFormats(ajv);
    for (const [name, schema] of Object.entries(schemas)) ajv.addSchema(rewriteRefs(schema), `urn:schemas:${name}`);
    let examples = 0;
    const visit = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if ('example' in schema && (schema.type !== undefined || schema.enum !== undefined || schema.format !== undefined)) {
        const { example, description: _description, ...rest } = schema;
        const validate = ajv.compile(rewriteRefs(rest));
        expect([where, example, validate(example) ? 'valid' : ajv.errorsText(validate.errors)]).toEqual([where, example, 'valid']);
        examples++;
      }
      for (const [key, value] of Object.entries(schema)) if (key !== 'example') visit(value, `${where}/${key}`);
    };
    visit(document, '#');
    expect(examples).toBeGreaterThan(20);
  });

  describe('request body examples', () => {
    let project: TestProject;
    beforeAll(async () => {
      project = await createProject(t);
    });

    it('are accepted by the service as they are', async () => {
      const task = await createTask(project);
      const sprint = (await project.api.post('/api/v1/sprints', { name: 'S' }).expect(201)).body.sprint;
      const ids: Record<string, string> = { taskId: task.id, sprintId: sprint.id };
      let sent = 0;
      for (const { method, path, operation } of operations()) {
        const body = operation.requestBody?.content['application/json'];
        if (!path.startsWith('/api/') || !body?.examples) continue;
        for (const { value } of Object.values(body.examples)) {
          const url = path.replace(/\{(\w+)\}/g, (_match, name: string) => ids[name]);
          const res = await project.api[method as 'post' | 'patch'](url, value as object);
          // An example that names an id of another project (none does today) could only be 404.
          expect([method, path, res.status]).toEqual([method, path, method === 'post' ? 201 : 200]);
          sent++;
        }
      }
      expect(sent).toBe(6);
    });

    it('name no ids: Swagger UI offers them as they are', () => {
      for (const { path, operation } of operations()) {
        for (const { value } of Object.values(operation.requestBody?.content['application/json']?.examples ?? {})) {
          expect([path, JSON.stringify(value)]).not.toEqual([path, expect.stringMatching(/[0-9a-f]{8}-[0-9a-f]{4}-/)]);
        }
      }
    });
  });

  describe('error examples', () => {
    const example = (method: string, path: string, status: number) =>
      paths[path][method].responses[String(status)].content!['application/problem+json'].example;

    it('show under each error status the problem the service answers there', async () => {
      const project = await createProject(t);
      const reader = await project.issueKey([], 'Reader');
      const task = await createTask(project);
      const answers: [string, string, number, Record<string, unknown>][] = [];
      const record = (method: string, path: string, res: { status: number; body: Record<string, unknown> }) =>
        answers.push([method, path, res.status, res.body]);

      record('get', '/api/v1/tasks', await project.api.get('/api/v1/tasks?colour=red'));
      record('post', '/api/v1/tasks', await project.api.post('/api/v1/tasks', { title: 'A', colour: 'red' }));
      record('get', '/api/v1/tasks', await t.http.get('/api/v1/tasks'));
      record('post', '/admin/v1/projects', await t.http.post('/admin/v1/projects').send({ name: 'P' }));
      record('patch', '/api/v1/tasks/{taskId}', await reader.api.patch(`/api/v1/tasks/${task.id}`, { title: 'B' }));
      record(
        'patch',
        '/api/v1/tasks/{taskId}/comments/{commentId}',
        await reader.api.patch(`/api/v1/tasks/${task.id}/comments/${NO_SUCH_ID}`, { body: 'B' }),
      );
      record('get', '/api/v1/tasks/{taskId}', await project.api.get(`/api/v1/tasks/${NO_SUCH_ID}`));
      record('get', '/api/v1/tasks/{taskId}/comments/{commentId}', await project.api.get(`/api/v1/tasks/${task.id}/comments/${NO_SUCH_ID}`));
      record('delete', '/api/v1/trash/{taskId}', await project.api.delete(`/api/v1/trash/${NO_SUCH_ID}`));
      record('get', '/api/v1/sprints/{sprintId}', await project.api.get(`/api/v1/sprints/${NO_SUCH_ID}`));
      record(
        'delete',
        '/api/v1/tasks/{taskId}/dependencies/{blockedById}',
        await project.api.delete(`/api/v1/tasks/${task.id}/dependencies/${NO_SUCH_ID}`),
      );
      record('patch', '/admin/v1/labels/{labelId}', await asAdmin(t).patch(`/admin/v1/labels/${NO_SUCH_ID}`, { name: 'x' }));
      record('post', '/api/v1/tasks', await project.api.post('/api/v1/tasks', { title: 'A', sprintId: NO_SUCH_ID }));
      record('post', '/api/v1/tasks/bulk', await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'A', sprintId: NO_SUCH_ID }] }));
      record('patch', '/api/v1/tasks/{taskId}', await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'B' }).set('If-Match', '"stale"'));
      record(
        'post',
        '/api/v1/tasks',
        await project.api.post('/api/v1/tasks', JSON.stringify({ title: 'x'.repeat(1024 * 1024) })).set('Content-Type', 'application/json'),
      );
      record('post', '/api/v1/tasks', await project.api.post('/api/v1/tasks', 'title=A').set('Content-Type', 'text/plain'));
      await project.api.post('/api/v1/tasks', { title: 'A' }).set('Idempotency-Key', 'error-examples').expect(201);
      record('post', '/api/v1/tasks', await project.api.post('/api/v1/tasks', { title: 'B' }).set('Idempotency-Key', 'error-examples'));

      expect(answers.map(([, , status]) => status)).toEqual([
        400, 400, 401, 401, 403, 403, 404, 404, 404, 404, 404, 404, 404, 404, 412, 413, 415, 422,
      ]);
      for (const [method, path, status, body] of answers) {
        expect([method, path, status, example(method, path, status)]).toEqual([method, path, status, body]);
      }
    });

    it('show the problems no test provokes at will as the service words them', () => {
      expect(example('post', '/api/v1/tasks', 409)).toEqual(
        problemJson(problemFromDatabaseError(Object.assign(new Error('could not serialize access'), { severity: 'ERROR', code: '40001' }))!),
      );
      expect(example('get', '/api/v1/tasks', 503)).toEqual(problemJson(problemFromDatabaseError({ code: 'ECONNREFUSED' })!));
      expect(example('get', '/api/v1/tasks', 500)).toMatchObject({ status: 500, code: 'internal' });
      expect(example('get', '/api/v1/tasks', 429)).toMatchObject({ status: 429, code: 'rate_limited' });
    });

    it('differ from status to status', () => {
      const codes = new Map<string, Set<string>>();
      for (const { operation } of operations()) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const body = response.content?.['application/problem+json']?.example;
          if (!Number(status) || Number(status) < 400) continue;
          expect([operation.operationId, status, body?.status]).toEqual([operation.operationId, status, Number(status)]);
          if (!codes.has(status)) codes.set(status, new Set());
          codes.get(status)!.add(String(body!.code));
        }
      }
      expect(Object.fromEntries([...codes].map(([status, set]) => [status, [...set].sort()]))).toMatchObject({
        '400': ['unknown_field'],
        '401': ['unauthenticated'],
        '403': ['forbidden', 'insufficient_permission'],
        '404': ['not_found'],
        '409': ['conflict'],
        '412': ['precondition_failed'],
        '413': ['attachment_too_large', 'payload_too_large'],
        '415': ['unsupported_media_type'],
        '422': ['idempotency_key_reused'],
        '429': ['rate_limited'],
        '500': ['internal'],
        '503': ['database_unavailable', 'service_unavailable'],
      });
    });
  });
});

describe('the 429 example', () => {
  it('is what the rate limit answers, on the API (per key) and on the admin interface (per address)', async () => {
    // Room for the project's set-up through the admin interface, which may be limited too.
    const t = await startTestApp({ rateLimitPerMinute: 10 });
    try {
      const project = await createProject(t);
      let limited;
      for (let request = 0; request <= 10 && limited?.status !== 429; request++) limited = await project.api.get('/api/v1/members');
      expect(limited!.status).toBe(429);
      const document = withAnswersResolved((await t.http.get('/docs/openapi.json').expect(200)).body);
      expect(document.paths['/api/v1/members'].get.responses['429'].content['application/problem+json'].example).toEqual(limited!.body);
      let adminLimited;
      for (let request = 0; request <= 10 && adminLimited?.status !== 429; request++) adminLimited = await asAdmin(t).get('/admin/v1/projects');
      expect(adminLimited!.status).toBe(429);
      expect(document.paths['/admin/v1/projects'].get.responses['429'].content['application/problem+json'].example).toEqual(adminLimited!.body);
    } finally {
      await t.close();
    }
  });
});

describe('the answer checker (test/support/openapi-contract.ts)', () => {
  const t = useTestApp();
  let contract: OpenApiContract;
  beforeAll(async () => {
    contract = OpenApiContract.of((await t.http.get('/docs/openapi.json').expect(200)).body);
  });

  const rateLimit = { 'ratelimit-limit': 10, 'ratelimit-remaining': '9', 'ratelimit-reset': '60', 'x-request-id': 'r', etag: '"abc"' };
  const json = (status: number, body: unknown, headers: Record<string, string | number> = rateLimit): Answer => ({
    method: 'GET',
    url: '/api/v1/members?limit=1',
    status,
    headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json; charset=utf-8', ...headers },
    body: Buffer.from(JSON.stringify(body)),
  });
  const member = { membershipId: '5b0c8d52-8a2a-4d55-9a59-2b2f4bd1e9a1', name: 'Ada' };
  let listedTask: Record<string, unknown>;
  beforeAll(async () => {
    const project = await createProject(t, 'Answer checker');
    await createTask(project);
    [listedTask] = (await project.api.get('/api/v1/tasks').expect(200)).body.tasks;
  });
  const problem = { type: 'about:blank', title: 'Not Found', status: 404, detail: 'x', code: 'not_found' };

  it('passes an answer that matches its operation', () => {
    expect(contract.check(json(200, { members: [member] }))).toEqual({ kind: 'operation', operationId: 'listMembers', errors: [] });
  });

  it('fails a status the operation does not document', () => {
    expect(contract.check(json(404, problem)).errors).toEqual([expect.stringContaining('status 404 is not documented')]);
  });

  it('fails a body that lacks a required field, carries an undocumented one, or has a wrong format', () => {
    expect(contract.check(json(200, { members: [{ name: 'Ada' }] })).errors).toEqual([
      expect.stringContaining("must have required property 'membershipId'"),
    ]);
    expect(contract.check(json(200, { members: [{ ...member, email: 'a@b.c' }] })).errors).toEqual([
      expect.stringContaining('must NOT have additional properties'),
    ]);
    expect(contract.check(json(200, { members: [{ ...member, membershipId: 'not-a-uuid' }] })).errors).toEqual([
      expect.stringContaining('must match format "uuid"'),
    ]);
  });

  it('fails a missing documented header, a header of the wrong type and an undocumented content type', () => {
    expect(contract.check(json(200, { members: [] }, { 'x-request-id': 'r' })).errors).toEqual([
      expect.stringContaining('lacks the required header ETag'),
      expect.stringContaining('lacks the required header RateLimit-Limit'),
      expect.stringContaining('lacks the required header RateLimit-Remaining'),
      expect.stringContaining('lacks the required header RateLimit-Reset'),
    ]);
    expect(contract.check(json(200, { members: [] }, { ...rateLimit, 'ratelimit-remaining': 'many' })).errors).toEqual([
      expect.stringContaining('header RateLimit-Remaining'),
    ]);
    expect(contract.check({ ...json(200, { members: [] }), headers: { ...rateLimit, 'content-type': 'text/html' } }).errors).toEqual([
      expect.stringContaining('Content-Type "text/html" is not documented'),
    ]);
  });

  it('accepts null for assignee and sprint, and history values that are JSON scalars, lists of strings or null', () => {
    // A task as the list shows it, every key the service answers, with null assignee and sprint.
    const task = { ...listedTask, assignee: null, sprint: null };
    const list = (body: unknown) => contract.check({ ...json(200, body), url: '/api/v1/tasks' }).errors;
    expect(list({ tasks: [task, { ...task, assignee: member }], nextCursor: null, total: 2 })).toEqual([]);
    expect(list({ tasks: [{ ...task, assignee: {} }], nextCursor: null, total: 1 })).not.toEqual([]);
    expect(list({ tasks: [{ ...task, dueDate: '2026-02-30' }], nextCursor: null, total: 1 })).toEqual([expect.stringContaining('format "date"')]);

    const entry = (from: unknown, to: unknown) => ({
      id: member.membershipId,
      createdAt: '2026-11-22T10:00:00.000Z',
      actor: 'Key (API)',
      action: 'updated',
      changes: [{ field: 'x', from, to }],
    });
    const history = (from: unknown, to: unknown) =>
      contract.check({ ...json(200, { history: [entry(from, to)], nextCursor: null }), url: `/api/v1/tasks/${member.membershipId}/history` }).errors;
    expect(history(null, 'todo')).toEqual([]);
    expect(history([], ['a', 'b'])).toEqual([]);
    expect(history(1.5, true)).toEqual([]);
    expect(history({ a: 1 }, [1])).not.toEqual([]);
  });

  it('holds answers of unknown routes to problem+json, and leaves /docs alone', () => {
    expect(contract.check({ ...json(404, problem), url: '/api/v1/nothing' })).toEqual({ kind: 'unknown route', errors: [] });
    expect(contract.check({ ...json(200, {}), url: '/api/v1/nothing' }).errors).toEqual([expect.stringContaining('must answer a 4xx')]);
    expect(contract.check({ ...json(404, { detail: 'x' }), url: '/nothing' }).errors).not.toEqual([]);
    expect(contract.check({ ...json(200, '<html>'), url: '/docs/' })).toEqual({ kind: 'docs', errors: [] });
  });

  it('checks answers to requests made without supertest, and fails the request whose answer breaks the document', async () => {
    const project = await createProject(t);
    const before = t.answers.counts.operation;
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/members`, { headers: { Authorization: `Bearer ${project.key}` } });
    expect(res.status).toBe(200);
    expect(t.answers.counts.operation).toBe(before + 1);
    expect(t.answers.unclaimedFailures).toEqual([]);
  });

  it('fails a request made through t.http when the checker finds its answer wrong', async () => {
    const project = await createProject(t);
    jest
      .spyOn(t.answers, 'verdictFor')
      .mockReturnValueOnce({ kind: 'operation', errors: ['GET /api/v1/members answered 200: body/members must be array'] });
    await expect(t.http.get('/api/v1/members').set('Authorization', `Bearer ${project.key}`)).rejects.toThrow(
      /The answer breaks \/docs\/openapi.json:\n {2}GET \/api\/v1\/members answered 200: body\/members must be array/,
    );
    await t.http.get('/api/v1/members').set('Authorization', `Bearer ${project.key}`).expect(200);
  });
});

function rewriteRefs(schema: unknown): object {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"urn:schemas:'));
}
