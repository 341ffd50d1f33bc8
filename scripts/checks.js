// npm test's checks before Jest (typecheck, lint, format:check, lint:openapi), as many at a time as
// the machine has cores: each is one process on one core, and they read the tree without writing
// to the same place (lint:openapi builds dist/). Each one's output is printed whole once it ends.
const { spawn } = require('node:child_process');
const os = require('node:os');

// The longest first (lint:openapi builds dist/ on a fresh clone).
const CHECKS = ['lint:openapi', 'typecheck', 'format:check', 'lint'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(script) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(npm, ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`> npm run ${script}: ${code === 0 ? 'passed' : `failed (exit code ${code})`} in ${seconds} s\n${output}`);
      resolve(code === 0);
    });
  });
}

async function main() {
  const queue = [...CHECKS];
  const failed = [];
  const lanes = Math.min(queue.length, os.availableParallelism?.() ?? os.cpus().length);
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let script = queue.shift(); script; script = queue.shift()) if (!(await run(script))) failed.push(script);
    }),
  );
  if (failed.length) {
    console.error(`Failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

main();
