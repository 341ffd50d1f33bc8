import { ServerProcess, startServerProcess, stopServerProcess } from './support/server-process';
import { createTestDatabase, engine, TestDatabase } from './support/test-database';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

// decisions.md sections 8 and 26: a server started without ADMIN_TOKEN, as `npm start` runs it,
// says so once in its start-up log, and every admin path says why it is 404.
describe('a server started without ADMIN_TOKEN', () => {
  let database: TestDatabase | undefined;
  let server: ServerProcess;
  beforeAll(async () => {
    if (engine === 'postgresql') database = await createTestDatabase();
    server = await startServerProcess({ ADMIN_TOKEN: '', ...(database ? { DATABASE_URL: database.url! } : { DATA_DIR: 'memory://' }) });
  }, 120_000);
  afterAll(async () => {
    await stopServerProcess(server);
    await database?.drop();
  });

  const get = (path: string, init: RequestInit = {}) => fetch(`${server.baseUrl}${path}`, init);
  const messages = () => server.logLines().map((line) => String(line.msg));

  it('says once in its start-up log that the admin interface is off, what it does and how to turn it on', () => {
    const said = messages().filter((msg) => msg.includes('admin interface'));
    expect(said).toHaveLength(1);
    for (const part of ['ADMIN_TOKEN', '/admin/v1', 'sprint activation and closing', 'projects', 'members', 'labels', 'keys', 'restart']) {
      expect(said[0]).toContain(part);
    }
    if (engine === 'postgresql') expect(said[0]).toMatch(/no project key can be issued without it/);
    else expect(said[0]).toMatch(/npm run demo:key/);
  });

  it('says, without HOST, that it listens on every interface, with a URL one can open', () => {
    const line = messages().find((msg) => msg.startsWith('Listening on '))!;
    const port = new URL(server.baseUrl).port;
    expect(line).toContain('every interface (HOST is unset)');
    expect(line).toContain(`open http://localhost:${port}/docs`);
    expect(line).not.toMatch(/^Listening on http:\/\/localhost/);
  });

  it('answers every /admin/v1 path 404 saying that the admin interface is off and naming ADMIN_TOKEN, whatever the method', async () => {
    for (const [method, path] of [
      ['GET', '/admin/v1/projects'],
      ['POST', '/admin/v1/sprints/00000000-0000-4000-8000-000000000000/close'],
      ['PUT', '/admin/v1/projects'],
      ['GET', '/admin/v1'],
      ['DELETE', '/admin/v1/no/such/thing'],
    ]) {
      const res = await get(path, { method, headers: { Authorization: 'Bearer whatever' } });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body: Json = await res.json();
      expect(body.code).toBe('not_found');
      expect(body.detail).toMatch(/admin interface .* is off/);
      expect(body.detail).toContain('ADMIN_TOKEN');
    }
  });

  it('answers GET / with the admin interface disabled', async () => {
    const body: Json = await (await get('/')).json();
    expect(body.adminInterface).toMatchObject({ enabled: false, path: '/admin/v1' });
    expect(body.adminInterface.description).toContain('ADMIN_TOKEN');
  });

  it('documents neither the admin operations nor the admin-token scheme that Swagger UI would offer in Authorize', async () => {
    const document: Json = await (await get('/docs/openapi.json')).json();
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/admin/'))).toEqual([]);
    expect(Object.keys(document.components.securitySchemes)).toEqual(['api-key']);
    expect(document.tags.map((tag: Json) => tag.name)).not.toContain('admin');
  });
});
