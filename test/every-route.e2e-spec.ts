import type { Response } from 'supertest';
import { NO_SUCH_ID, useProject } from './support/fixtures';
import { ADMIN_TOKEN, TestApp, useTestApp } from './support/test-app';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Route {
  method: string;
  /** As the router holds it: /api/v1/tasks/:taskId/move */
  path: string;
  /** Its path parameters that are ids (named ...Id), in order. */
  ids: string[];
}

/** Every route the Express router serves with an id in its path, with each method it serves (HEAD with GET). */
function routesWithIds(t: TestApp): Route[] {
  const express = t.app.getHttpAdapter().getInstance();
  const layers: Json[] = express.router.stack;
  return layers
    .filter((layer) => layer.route)
    .flatMap((layer) => {
      const path: string = layer.route.path;
      const ids = [...path.matchAll(/:(\w+Id)\b/g)].map((match) => match[1]);
      const methods = Object.keys(layer.route.methods).flatMap((method) => (method === 'get' ? ['get', 'head'] : [method]));
      return ids.length === 0 ? [] : methods.map((method) => ({ method, path, ids }));
    });
}

/** Ids that are not ids, as a client or a fuzzer might send them; the empty one is a segment left out. */
const NOT_IDS = ['abc', '}', 'x.y', '00000000-0000-4000-c000-000000000000', 'ABCDEF00-0000-4000-8000-000000000000', ''];

/** Whether a JSON schema (OpenAPI 3.1) lets null through. */
function admitsNull(schema: Json): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes('null') || schema.nullable === true || [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(admitsNull);
}

// decisions.md sections 1 and 17: no input makes a 5xx. Read from the app itself (its router, the
// document it serves), so that a route or a field added later is checked without a list to keep.
describe('every route, as the router and the served document list them', () => {
  const t = useTestApp();
  const project = useProject(t);
  let document: Json;
  beforeAll(async () => {
    document = (await t.http.get('/docs/openapi.json').expect(200)).body;
  });

  const tokenFor = (path: string) => (path.startsWith('/admin/') ? ADMIN_TOKEN : project.key);
  const send = (method: string, path: string, body?: object): Promise<Response> => {
    const request = (t.http as Json)[method](path).set('Authorization', `Bearer ${tokenFor(path)}`);
    return body === undefined ? request : request.send(body);
  };
  const resolve = (schema: Json): Json => (schema?.$ref ? document.components.schemas[schema.$ref.split('/').pop()] : schema);
  /** The document's example body of the operation, or none. */
  const exampleOf = (operation: Json): object | undefined => {
    const content = operation?.requestBody?.content?.['application/json'];
    return content?.example ?? (Object.values(content?.examples ?? {})[0] as Json)?.value;
  };
  const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

  it('answers a path id that is not a UUID (abc, }, x.y, a wrong variant, upper case) 404 on every route and method (403 on a downloadUrl), or 400 for the body; an empty one never 5xx', async () => {
    const routes = routesWithIds(t);
    expect(routes.length).toBeGreaterThan(25);
    const problems: string[] = [];
    for (const route of routes) {
      const operation = document.paths[openApiPath(route.path)]?.[route.method];
      for (const value of NOT_IDS) {
        // The id in each position in turn, the others naming nothing.
        for (const id of route.ids) {
          const path = route.path.replace(/:(\w+)/g, (_, name) => (name === id ? encodeURIComponent(value) : NO_SUCH_ID));
          for (const body of ['get', 'head', 'delete'].includes(route.method) ? [undefined] : [{}, exampleOf(operation)].filter(Boolean)) {
            const res = await send(route.method, path, body);
            // A downloadUrl whose id was changed is a changed URL (decisions.md section 24): 403 forbidden.
            const changedLink =
              route.path.startsWith('/api/v1/attachment-downloads/') &&
              res.status === 403 &&
              (route.method === 'head' || res.body?.code === 'forbidden');
            const acceptable = value === '' ? res.status < 500 : res.status === 404 || (res.status === 400 && body !== undefined) || changedLink;
            if (!acceptable) problems.push(`${route.method.toUpperCase()} ${path} ${JSON.stringify(body)}: ${res.status} ${res.body?.code ?? ''}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

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
