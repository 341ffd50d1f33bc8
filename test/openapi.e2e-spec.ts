import { startTestApp, TestApp } from './support/test-app';

interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
  summary?: string;
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let paths: Record<string, Record<string, Operation>>;
  let schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }>;
  beforeAll(async () => {
    t = await startTestApp();
    const document = (await t.http.get('/docs/openapi.json').expect(200)).body;
    paths = document.paths;
    schemas = document.components.schemas;
  });
  afterAll(() => t.close());

  const apiOperations: [string, string, string | null][] = [
    ['get', '/api/v1/tasks', null],
    ['post', '/api/v1/tasks', 'tasks:create'],
    ['get', '/api/v1/tasks/{taskId}', null],
    ['patch', '/api/v1/tasks/{taskId}', 'tasks:edit'],
    ['delete', '/api/v1/tasks/{taskId}', 'tasks:delete'],
    ['post', '/api/v1/tasks/{taskId}/dependencies', 'tasks:edit'],
    ['delete', '/api/v1/tasks/{taskId}/dependencies/{blockedById}', 'tasks:edit'],
    ['get', '/api/v1/tasks/{taskId}/history', null],
    ['get', '/api/v1/members', null],
    ['get', '/api/v1/labels', null],
    ['get', '/api/v1/sprints', null],
    ['post', '/api/v1/sprints', 'sprints:manage'],
    ['get', '/api/v1/sprints/{sprintId}', null],
    ['patch', '/api/v1/sprints/{sprintId}', 'sprints:manage'],
    ['delete', '/api/v1/sprints/{sprintId}', 'sprints:manage'],
    ['get', '/api/v1/trash', null],
    ['post', '/api/v1/trash/{taskId}/restore', 'tasks:delete'],
    ['delete', '/api/v1/trash/{taskId}', 'tasks:delete'],
  ];

  it.each(apiOperations)('documents %s %s with the bearer key, its answers and problem+json errors', (method, path, permission) => {
    const operation = paths[path]?.[method];
    expect(operation).toBeDefined();
    expect(operation.security).toEqual([{ 'api-key': [] }]);
    expect(operation.summary).toEqual(expect.any(String));
    const errors = ['400', '401', '429', '500', ...(permission ? ['403'] : [])];
    for (const status of errors) {
      expect(operation.responses[status]?.content?.['application/problem+json']?.schema.$ref).toBe('#/components/schemas/ProblemDto');
    }
    const success = Object.keys(operation.responses).find((status) => status.startsWith('2'));
    expect(success).toBeDefined();
    if (success !== '204') expect(operation.responses[success!].content?.['application/json']?.schema.$ref).toMatch(/Dto$/);
    if (['post', 'patch'].includes(method) && !path.endsWith('/restore')) {
      expect(operation.requestBody?.content['application/json'].schema.$ref).toMatch(/Dto$/);
      expect(operation.responses['413']).toBeDefined();
      expect(operation.responses['415']).toBeDefined();
    }
  });

  it('documents the admin interface with the admin token scheme', () => {
    for (const [method, path] of [
      ['post', '/admin/v1/projects'],
      ['post', '/admin/v1/projects/{projectId}/members'],
      ['post', '/admin/v1/projects/{projectId}/labels'],
      ['post', '/admin/v1/projects/{projectId}/keys'],
      ['delete', '/admin/v1/keys/{keyId}'],
      ['post', '/admin/v1/sprints/{sprintId}/activate'],
      ['post', '/admin/v1/sprints/{sprintId}/close'],
    ]) {
      expect(paths[path]?.[method]?.security).toEqual([{ 'admin-token': [] }]);
    }
  });

  it('describes every field of a task, in lists and in full', () => {
    const listFields = [
      'id',
      'projectId',
      'title',
      'status',
      'priority',
      'parentId',
      'assignee',
      'labels',
      'sprint',
      'dueDate',
      'completedAt',
      'createdAt',
      'updatedAt',
      'blocked',
    ];
    expect(Object.keys(schemas.TaskDto.properties).sort()).toEqual([...listFields].sort());
    expect(schemas.TaskDto.required?.sort()).toEqual([...listFields].sort());
    expect(Object.keys(schemas.TaskDetailDto.properties)).toEqual(expect.arrayContaining(['description', 'dependencies']));
    expect(Object.keys(schemas.TrashedTaskDto.properties)).toContain('deletedAt');
    expect(Object.keys(schemas.TaskListDto.properties).sort()).toEqual(['nextCursor', 'tasks', 'total']);
  });

  it('describes what clients send without read-only fields', () => {
    expect(schemas.CreateTaskDto.required).toEqual(['title']);
    expect(Object.keys(schemas.UpdateTaskDto.properties)).not.toContain('parentId');
    expect(schemas.UpdateTaskDto.required ?? []).toEqual([]);
    expect(Object.keys(schemas.CreateSprintDto.properties)).not.toContain('status');
    expect(Object.keys(schemas.UpdateSprintDto.properties).sort()).toEqual(['endDate', 'goal', 'name', 'startDate']);
  });

  it('lists every query parameter of the task list', () => {
    const names = (paths['/api/v1/tasks'].get as unknown as { parameters: { name: string }[] }).parameters.map((parameter) => parameter.name);
    expect(names.sort()).toEqual(
      ['status', 'priority', 'assigneeId', 'sprintId', 'labelId', 'parentId', 'q', 'dueAfter', 'dueBefore', 'updatedSince', 'limit', 'cursor'].sort(),
    );
  });
});
