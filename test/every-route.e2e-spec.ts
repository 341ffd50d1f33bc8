import type { Response } from 'supertest';
import { createProject, NO_SUCH_ID, TestProject } from './support/fixtures';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Whether a JSON schema (OpenAPI 3.1) lets null through. */
function admitsNull(schema: Json): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes('null') || schema.nullable === true || [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(admitsNull);
}

// decisions.md sections 1 and 17: no input makes a 5xx, and bad input is a clear 400. Read from the
// app itself (the document it serves), so that a field added later is checked without a list to keep.
describe('every route, as the served document lists them', () => {
  let t: TestApp;
  let project: TestProject;
  let document: Json;
  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t);
    document = (await t.http.get('/docs/openapi.json').expect(200)).body;
  });
  afterAll(() => t.close());

  const tokenFor = (path: string) => (path.startsWith('/admin/') ? ADMIN_TOKEN : project.key);
  const send = (method: string, path: string, body?: object): Promise<Response> => {
    const request = (t.http as Json)[method](path).set('Authorization', `Bearer ${tokenFor(path)}`);
    return body === undefined ? request : request.send(body);
  };
  const resolve = (schema: Json): Json => (schema?.$ref ? document.components.schemas[schema.$ref.split('/').pop()] : schema);
  it('answers null in every body field that the document does not mark nullable 400 naming it, on every operation', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const [template, operations] of Object.entries<Json>(document.paths)) {
      for (const [method, operation] of Object.entries<Json>(operations)) {
        const schema = resolve(operation?.requestBody?.content?.['application/json']?.schema);
        if (!schema?.properties) continue;
        const path = template.replace(/\{\w+\}/g, NO_SUCH_ID);
        for (const [field, property] of Object.entries<Json>(schema.properties)) {
          if (admitsNull(property)) continue;
          checked++;
          const res = await send(method, path, { [field]: null });
          const named = (res.body.errors ?? []).some((error: Json) => error.field === field);
          if (res.status !== 400 || !named) problems.push(`${method.toUpperCase()} ${template} {"${field}": null}: ${res.status} ${res.body.code}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(problems).toEqual([]);
  });
});
