// Before any test: the tests that run the service as a separate process (shutdown under load,
// database outage) start the built server, dist/main.js, as `npm start` does. Build it when it
// is missing (a fresh clone) or older than a source file.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');

module.exports = async function buildGlobalSetup() {
  const built = path.join(root, 'dist/main.js');
  if (fs.existsSync(built) && newestSourceChange() <= fs.statSync(built).mtimeMs) return;
  execFileSync(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js', { paths: [root] }), 'build'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
};

function newestSourceChange() {
  let newest = 0;
  const visit = (file) => {
    const stat = fs.statSync(file);
    if (stat.isDirectory()) for (const entry of fs.readdirSync(file)) visit(path.join(file, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const entry of ['src', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package.json']) visit(path.join(root, entry));
  return newest;
}
