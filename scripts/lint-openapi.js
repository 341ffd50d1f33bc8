// npm run lint:openapi: two linters on the served document (the npm script builds dist/ first),
// each failing on any finding, warnings included:
// - Redocly CLI's recommended rules (redocly.yaml). Offline: redocly.yaml turns telemetry off and
//   REDOCLY_SUPPRESS_UPDATE_NOTICE the registry lookup for a newer version.
// - Spectral's spectral:oas ruleset (.spectral.yaml), the one many API gateways and portals run.
const { spawnSync } = require('node:child_process');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { servedOpenApiDocument } = require('./openapi-document');

const root = path.join(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

async function main() {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
  try {
    const file = path.join(directory, 'openapi.json');
    writeFileSync(file, JSON.stringify(await servedOpenApiDocument(), null, 2));
    const linters = [
      ['Redocly', bin('redocly'), ['lint', '--config', path.join(root, 'redocly.yaml'), file]],
      ['Spectral', bin('spectral'), ['lint', '--ruleset', path.join(root, '.spectral.yaml'), '--fail-severity', 'hint', file]],
    ];
    const failed = [];
    for (const [name, command, args] of linters) {
      const result = spawnSync(command, args, {
        stdio: 'inherit',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      });
      if (result.status !== 0) failed.push(name);
    }
    if (failed.length) {
      console.error(`OpenAPI lint failed: ${failed.join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
