// npm run lint:openapi: Redocly's recommended rules on the served document (the npm script
// builds dist/ first), failing on any error or warning (redocly.yaml). Offline: redocly.yaml turns
// telemetry off and REDOCLY_SUPPRESS_UPDATE_NOTICE the registry lookup for a newer version.
const { spawnSync } = require('node:child_process');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { servedOpenApiDocument } = require('./openapi-document');

async function main() {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
  try {
    const file = path.join(directory, 'openapi.json');
    writeFileSync(file, JSON.stringify(await servedOpenApiDocument(), null, 2));
    const root = path.join(__dirname, '..');
    const result = spawnSync(path.join(root, 'node_modules', '.bin', 'redocly'), ['lint', '--config', path.join(root, 'redocly.yaml'), file], {
      stdio: 'inherit',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    process.exitCode = result.status ?? 1;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
