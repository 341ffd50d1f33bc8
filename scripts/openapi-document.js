// The OpenAPI document exactly as the service serves it at /docs/openapi.json: the built service
// (dist/, made by `nest build` with the Swagger CLI plugin, what `npm start` runs) on an in-memory
// PGlite, with ADMIN_TOKEN set so that the admin interface is documented too.
// Plain JavaScript run by node: the service needs tsc's decorator metadata, which tsx does not emit.
const path = require('node:path');

async function servedOpenApiDocument() {
  const { createApp } = require(path.join(__dirname, '..', 'dist', 'app.factory.js'));
  const { loadConfig } = require(path.join(__dirname, '..', 'dist', 'config', 'app-config.js'));
  const app = await createApp({
    // What a deployment gets from an empty environment, on a database of its own.
    ...loadConfig({}),
    port: 0,
    dataDir: 'memory://',
    adminToken: 'documents-the-admin-interface',
    seedDemoProject: false,
    logLevel: 'error',
  });
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address();
    const response = await fetch(`http://127.0.0.1:${port}/docs/openapi.json`);
    if (response.status !== 200) throw new Error(`GET /docs/openapi.json answered ${response.status}`);
    return await response.json();
  } finally {
    await app.close();
  }
}

module.exports = { servedOpenApiDocument };
