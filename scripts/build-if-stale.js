// Builds dist/ with `nest build` only when it is missing or older than an input of the build: what
// `npm start` (prestart) and the tests that start the built server run first. A fresh clone builds
// once (about 40 s); later starts skip it. `npm run build` always builds.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
// What the build reads: the sources, the settings of tsc and Nest's CLI (the Swagger plugin), the dependencies.
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package.json', 'package-lock.json'];

// A directory's own time counts too: a file deleted, renamed or added (with whatever time it
// carries, as a checkout or a copy keeps it) changes the time of the directory that holds it.
// (The root's time is left out: dist/, data/ and node_modules live there.)
function newestInputChange(root) {
  let newest = 0;
  const visit = (file) => {
    const stat = fs.statSync(file);
    newest = Math.max(newest, stat.mtimeMs);
    if (stat.isDirectory()) for (const entry of fs.readdirSync(file)) visit(path.join(file, entry));
  };
  for (const entry of INPUTS) if (fs.existsSync(path.join(root, entry))) visit(path.join(root, entry));
  return newest;
}

/** True when `root`'s dist/main.js exists and no input changed after it was written. */
function isBuildCurrent(root = ROOT) {
  const built = path.join(root, 'dist', 'main.js');
  return fs.existsSync(built) && newestInputChange(root) <= fs.statSync(built).mtimeMs;
}

/** `nest build` in `root`, its output on this process's. */
function nestBuild(root) {
  execFileSync(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js', { paths: [root] }), 'build'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/**
 * Builds when needed; true when it built. Says so first, and how long it took after: a first
 * start is otherwise half a minute of silence. (`log` and `build`: the tests give their own.)
 */
function buildIfStale(root = ROOT, { log = console.log, build = nestBuild } = {}) {
  if (isBuildCurrent(root)) return false;
  const why = fs.existsSync(path.join(root, 'dist', 'main.js')) ? 'a source or setting changed since the last build' : 'no build yet';
  log(`Building the server into dist/ (${why}); a first build takes about 30 s...`);
  const started = Date.now();
  build(root);
  log(`Built in ${Math.round((Date.now() - started) / 1000)} s.`);
  return true;
}

module.exports = { buildIfStale, isBuildCurrent };

if (require.main === module) {
  if (!buildIfStale()) console.log('dist/ is current: not rebuilding (npm run build forces a build)');
}
