import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process';
import { ADMIN_TOKEN, engine } from './support/test-app';

const ROOT = path.join(__dirname, '..');

/** The pages whose snippets run, in this order: the README, then the pages of docs/ by file name (docs/spec/ is the contract, not ours). */
function pages(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', ...docs.sort().map((name) => `docs/${name}`)];
}

interface Block {
  file: string;
  language: 'sh' | 'ts';
  heading: string;
  code: string;
}

/** The blocks marked ```sh runnable or ```ts runnable, page by page in order, with the heading each stands under. */
function runnableBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const file of pages()) {
    let heading = '';
    for (const part of readFileSync(path.join(ROOT, file), 'utf8').split(/^(```[^\n]*\n[\s\S]*?^```$)/m)) {
      const fence = /^```(sh|ts) runnable\n([\s\S]*?)^```$/m.exec(part);
      if (fence) blocks.push({ file, language: fence[1] as 'sh' | 'ts', heading, code: fence[2] });
      else if (!part.startsWith('```')) heading = [...part.matchAll(/^#+ (.+)$/gm)].at(-1)?.[1] ?? heading;
    }
  }
  return blocks;
}

// What no snippet should make the server answer: a snippet that runs "as written" but sends a
// wrong body, an undefined id or no key gets these.
const FAILURES = [400, 401, 403, 404, 415, 500, 503];

// The snippets of the README and of docs/, run as a reader runs them: against the built server
// (`npm start`), its demo key in TASKS_API_KEY and its ADMIN_TOKEN in the shell, `localhost:3000`
// being this server's address. Each block runs in a fresh shell, so none can lean on a variable an
// earlier block set; they share only the server's data. Embedded database only: the snippets test
// the documentation, not the database engine.
(engine === 'pglite' ? describe : describe.skip)('README and docs snippets', () => {
  let server: ServerProcess;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startServerProcess({ DATA_DIR: 'memory://' });
    const demoKey = /(tsk_[A-Za-z0-9_-]{43})/.exec(server.stdout())?.[1];
    if (!demoKey) throw new Error(`The server printed no demo key:\n${server.stdout()}`);
    env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TASKS_API_KEY: demoKey, ADMIN_TOKEN };
  }, 120_000);
  afterAll(() => stopServerProcess(server));

  const blocks = runnableBlocks();
  const here = (code: string) => code.replaceAll('localhost:3000', new URL(server.baseUrl).host);

  it('marks the snippets of every section that has one to run', () => {
    // Stated, not derived: a fence spelled otherwise (```bash) or a section moved without its
    // snippet fails here instead of silently running less.
    expect(blocks.map((block) => [block.file, block.language, block.heading])).toEqual([
      ['README.md', 'sh', 'A first walk-through'],
      ['docs/api.md', 'ts', 'The typed client'],
      ['docs/attachments.md', 'sh', 'Uploading'],
      ['docs/attachments.md', 'sh', 'Downloading'],
      ['docs/comments.md', 'sh', 'A walk-through'],
      ['docs/events.md', 'sh', 'The change feed'],
      ['docs/finding-work.md', 'sh', 'Search'],
      ['docs/finding-work.md', 'sh', 'Filter'],
      ['docs/operating.md', 'sh', 'Keys and the admin interface'],
      ['docs/planning.md', 'sh', 'From an empty project to a closed sprint'],
      ['docs/retries.md', 'sh', 'Retrying a write: `Idempotency-Key`'],
      ['docs/retries.md', 'sh', 'No lost updates: `If-Match`'],
      ['docs/retries.md', 'sh', 'Polling without downloading: `If-None-Match`'],
    ]);
  });

  it.each(blocks.map((block, index) => [index + 1, block.language, block.file, block.heading, block] as const))(
    'runs block %i (%s) of %s under "%s" as written',
    async (_index, language, _file, _heading, block) => {
      const answered = server.logLines().length;
      let output: { stdout: string; stderr: string };
      if (language === 'sh') {
        output = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', here(block.code)], { cwd: ROOT, env, timeout: 60_000 });
      } else {
        // A .ts file at the root of the repository, as docs/api.md says, run by tsx.
        const file = path.join(ROOT, `readme-snippet-${process.pid}.ts`);
        writeFileSync(file, here(block.code));
        try {
          output = await promisify(execFile)(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [file], { cwd: ROOT, env, timeout: 60_000 });
        } finally {
          rmSync(file, { force: true });
        }
      }
      expect(output.stdout.trim()).not.toBe('');
      const failures = server
        .logLines()
        .slice(answered)
        .filter((line) => typeof line.status === 'number' && FAILURES.includes(line.status))
        .map((line) => `${String(line.method)} ${String(line.path)} answered ${String(line.status)}`);
      expect(failures).toEqual([]);
    },
  );
});
