// Jest reporter: prints how many answers the run checked against the served OpenAPI document
// (test/support/openapi-contract.ts), per engine. Each TestApp appends its counts when it closes,
// to a directory made here, before the test workers start (they inherit the variable).
const { mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

class OpenApiContractReporter {
  constructor() {
    this.directory = mkdtempSync(path.join(os.tmpdir(), 'openapi-contract-'));
    process.env.OPENAPI_CONTRACT_REPORT_DIR = this.directory;
  }

  onRunComplete() {
    const rows = readdirSync(this.directory).flatMap((name) =>
      readFileSync(path.join(this.directory, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    );
    rmSync(this.directory, { recursive: true, force: true });
    if (!rows.length) return;
    const byEngine = new Map();
    for (const row of rows) {
      const total = byEngine.get(row.engine) ?? { operation: 0, 'unknown route': 0, docs: 0, files: new Set() };
      total.operation += row.operation;
      total['unknown route'] += row['unknown route'];
      total.docs += row.docs;
      total.files.add(row.file);
      byEngine.set(row.engine, total);
    }
    const lines = [...byEngine].map(
      ([engine, total]) =>
        `  ${engine}: ${total.operation} answers of documented operations and ${total['unknown route']} of unknown routes checked, ` +
        `from ${total.files.size} test files (and ${total.docs} of /docs itself, not checked)`,
    );
    console.log(`\nOpenAPI contract: every answer of every test app checked against its /docs/openapi.json\n${lines.join('\n')}\n`);
  }
}

module.exports = OpenApiContractReporter;
