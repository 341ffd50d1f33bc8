import { useTestApp } from './support/test-app';

describe('health, readiness and API docs', () => {
  const t = useTestApp();

  it('answers /health without a key', async () => {
    const res = await t.http.get('/health').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('answers /ready when the database answers', async () => {
    const res = await t.http.get('/ready').expect(200);
    expect(res.body).toEqual({ status: 'ready' });
  });

  it('serves Swagger UI at /docs without a key', async () => {
    const res = await t.http.get('/docs').redirects(1).expect(200);
    expect(res.text).toContain('swagger-ui');
  });

  it('serves the OpenAPI 3 document with the bearer scheme at /docs/openapi.json', async () => {
    const res = await t.http.get('/docs/openapi.json').expect(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(res.body.components.securitySchemes['api-key']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(res.body.paths['/api/v1/members'].get.security).toEqual([{ 'api-key': [] }]);
  });
});
