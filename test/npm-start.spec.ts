import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.join(__dirname, '..');
const { buildIfStale, isBuildCurrent } = require('../scripts/build-if-stale') as {
  isBuildCurrent(root?: string): boolean;
  buildIfStale(root: string, options: { log(line: string): void; build(root: string): void }): boolean;
};

describe('npm start', () => {
  it('builds dist/ only when it is missing or older than an input of the build, a source deleted or added included', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'build-if-stale-'));
    try {
      mkdirSync(path.join(root, 'src', 'tasks'), { recursive: true });
      writeFileSync(path.join(root, 'src', 'tasks', 'task.dto.ts'), '');
      writeFileSync(path.join(root, 'package.json'), '{}');
      expect(isBuildCurrent(root)).toBe(false); // a fresh clone: no dist/
      mkdirSync(path.join(root, 'dist'));
      writeFileSync(path.join(root, 'dist', 'main.js'), '');
      const at = (file: string, seconds: number) => utimesSync(path.join(root, file), seconds, seconds);
      const sourcesAt = (seconds: number) => ['src/tasks/task.dto.ts', 'src/tasks', 'src'].forEach((file) => at(file, seconds));
      sourcesAt(1_000);
      at('package.json', 1_000);
      at('dist/main.js', 2_000);
      expect(isBuildCurrent(root)).toBe(true);
      at('src/tasks/task.dto.ts', 3_000); // a source edited since
      expect(isBuildCurrent(root)).toBe(false);
      at('dist/main.js', 3_000);
      at('package.json', 4_000); // a dependency added since
      expect(isBuildCurrent(root)).toBe(false);
      at('dist/main.js', 5_000);
      expect(isBuildCurrent(root)).toBe(true);
      rmSync(path.join(root, 'src', 'tasks', 'task.dto.ts')); // a source deleted since
      expect(isBuildCurrent(root)).toBe(false);
      writeFileSync(path.join(root, 'src', 'tasks', 'task.dto.ts'), '');
      sourcesAt(1_000);
      expect(isBuildCurrent(root)).toBe(true);
      writeFileSync(path.join(root, 'src', 'tasks', 'old.ts'), ''); // added since, with an older time (a copy, a checkout)
      at('src/tasks/old.ts', 1_000);
      expect(isBuildCurrent(root)).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('says what it does before a build (a first start is half a minute of silence otherwise), and how long it took after', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'build-if-stale-'));
    try {
      mkdirSync(path.join(root, 'src'));
      const said: string[] = [];
      const built = buildIfStale(root, { log: (line) => said.push(line), build: () => said.push('(nest build)') });
      expect(built).toBe(true);
      expect(said).toEqual([
        expect.stringMatching(/^Building the server into dist\/ \(no build yet\); a first build takes about 30 s/),
        '(nest build)',
        expect.stringMatching(/^Built in \d+ s\.$/),
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('starts the built server at once when dist/ is current, without rebuilding it', async () => {
    // The Jest global setup has just built dist/ if it was stale.
    const builtAt = statSync(path.join(ROOT, 'dist', 'main.js')).mtimeMs;
    const started = Date.now();
    const child = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: '0', DATA_DIR: 'memory://', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start did not listen within 60 s:\n${output}`)), 60_000);
        child.stdout.on('data', () => {
          if (/"msg":"Listening on /.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
      });
      expect(output).toContain('dist/ is current: not rebuilding');
      expect(statSync(path.join(ROOT, 'dist', 'main.js')).mtimeMs).toBe(builtAt);
      // Seconds, not the 40 of a build (generous: the machine may be busy with other tests).
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      // npm runs node as its child: end the whole group, and wait until both have let go of the pipes.
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((resolve) => (child.stdout.closed && child.stderr.closed ? resolve(null) : child.once('close', resolve)));
    }
  });

  it('keeps `npm run start:dev` the watch mode and `npm run build` a full build', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pkg', 'get', 'scripts'], { cwd: ROOT });
    const scripts = JSON.parse(stdout) as Record<string, string>;
    expect(scripts['start:dev']).toBe('nest start --watch');
    expect(scripts.build).toBe('nest build');
    expect(scripts.prestart).toBe('node scripts/build-if-stale.js');
  });
});
