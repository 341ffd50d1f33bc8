// The order in which Jest's two workers take the test files. Jest runs first the files that took
// longest in an earlier run, from timings in its cache; without them (a fresh clone) it goes by
// file size, and a long file with a short source (attachments.e2e-spec.ts) started last, keeping
// one worker busy long after the other was done. Here a file Jest has no time for takes its time
// from docs/testing.md's table of the slowest files; longest first, then the files with no time
// at all, by size as Jest would.
const { readFileSync } = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const TABLE_SOURCE = path.join(__dirname, '..', '..', 'docs', 'testing.md');

/**
 * Seconds by project and file name, read from the table's rows: `| \`file\` | PGlite s | PostgreSQL s |`.
 * A unit file (`*.spec.ts`) runs in the unit project only, whichever column holds its figure.
 */
function slowestFiles(markdown = readFileSync(TABLE_SOURCE, 'utf8')) {
  const seconds = new Map();
  for (const line of markdown.split('\n')) {
    const row = line.match(/^\|\s*`([\w.-]+spec\.ts)`[^|]*\|([^|]*)\|([^|]*)\|/);
    if (!row) continue;
    const [, file, pglite, postgresql] = row;
    const figures = file.endsWith('.e2e-spec.ts') ? { pglite, postgresql } : { unit: pglite.trim() || postgresql };
    for (const [project, figure] of Object.entries(figures)) {
      const value = Number.parseFloat(figure);
      if (Number.isFinite(value)) seconds.set(`${project} ${file}`, value);
    }
  }
  if (seconds.size === 0) throw new Error(`${TABLE_SOURCE} has no table of the slowest files, which test/support/test-sequencer.js reads`);
  return seconds;
}

class SlowestFirstSequencer extends Sequencer {
  sort(tests) {
    const table = slowestFiles();
    // Jest's order first (the failed files, then by time or size): it sets `duration`, in ms, when its cache has one.
    const sorted = super.sort(tests);
    const expected = (test) => test.duration ?? 1000 * (table.get(`${test.context.config.displayName?.name} ${path.basename(test.path)}`) ?? -1);
    const failed = (test) => (this.hasFailed(test) ? 1 : 0);
    // Array.prototype.sort is stable: the files with no time (-1 s) keep Jest's order, by size, after the others.
    return sorted.sort((a, b) => failed(b) - failed(a) || expected(b) - expected(a));
  }
}

module.exports = SlowestFirstSequencer;
module.exports.slowestFiles = slowestFiles;
