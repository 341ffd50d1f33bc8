import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { createProject, createTask } from './support/fixtures';
import { startTestApp, TestApp } from './support/test-app';

const ROOT = path.join(__dirname, '..');
const CLIENT_TYPES_FILE = path.join(ROOT, 'clients', 'typescript', 'schema.d.ts');

/** The types `npm run client:generate` writes for `document`, by the generator's own code (scripts/client-types.js). */
async function generateClientTypes(document: unknown): Promise<string> {
  const directory = mkdtempSync(path.join(tmpdir(), 'client-types-'));
  try {
    writeFileSync(path.join(directory, 'openapi.json'), JSON.stringify(document));
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/client-types.js', path.join(directory, 'openapi.json')], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

describe('typed TypeScript client (clients/typescript)', () => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  const runExample = (env: Record<string, string>) =>
    promisify(execFile)(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['examples/sync-to-csv.ts'], {
      cwd: ROOT,
      env: { ...process.env, TASKS_API_URL: baseUrl, ...env },
    });
  afterAll(() => t.close());

  it('is generated from the document the service serves: run `npm run client:generate` when this fails', async () => {
    const document = (await t.http.get('/docs/openapi.json').expect(200)).body;
    const generated = await generateClientTypes(document);
    // Where the two first differ, rather than a diff of 4 000 lines.
    const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    let at = 0;
    while (at < Math.max(generated.length, committed.length) && generated[at] === committed[at]) at++;
    const difference =
      generated === committed
        ? null
        : { committed: committed.slice(Math.max(0, at - 100), at + 100), generated: generated.slice(Math.max(0, at - 100), at + 100) };
    expect(difference).toBeNull();
  });

  it('types nullable references and history values as the answers carry them', () => {
    const types = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    const taskDto = /^ {4}TaskDto: \{$([\s\S]*?)^ {4}\};$/m.exec(types)?.[1] ?? '';
    expect(taskDto).toContain("assignee: components['schemas']['MemberDto'] | null;");
    expect(taskDto).toContain("sprint: components['schemas']['SprintRefDto'] | null;");
    const fieldChange = /^ {4}FieldChangeDto: \{$([\s\S]*?)^ {4}\};$/m.exec(types)?.[1] ?? '';
    // Any JSON scalar, a list of ids, or null: whatever field a change names (FieldValueDto).
    expect(fieldChange).toContain('from: string | number | boolean | string[] | null;');
    expect(fieldChange).toContain('to: string | number | boolean | string[] | null;');
  });

  it('runs examples/sync-to-csv.ts: every task, page by page, as CSV', async () => {
    const project = await createProject(t);
    const [ada] = project.members;
    const titles = ['First', 'With, a comma', 'With "quotes"', 'Fourth', 'Fifth'];
    const tasks = [];
    for (const [i, title] of titles.entries()) {
      const estimate = [3, 0.5, null, 13, null][i];
      tasks.push(await createTask(project, { title, assigneeId: ada.membershipId, labelIds: [project.labels[0].id], estimate }));
    }
    const before = t.answers.counts.operation;

    const { stdout } = await runExample({ TASKS_API_KEY: project.key, TASKS_PAGE_SIZE: '2' });

    const lines = stdout.split('\r\n');
    expect(lines[0]).toBe('id,title,status,priority,assignee,sprint,labels,dueDate,estimate,rank,blocked,createdAt,updatedAt');
    expect(lines.slice(1, -1)).toEqual(
      [...tasks]
        .reverse()
        .map((task) =>
          [
            task.id,
            /[",]/.test(task.title) ? `"${task.title.replaceAll('"', '""')}"` : task.title,
            'backlog',
            'none',
            'Ada',
            '',
            'bug',
            '',
            task.estimate === null ? '' : String(task.estimate),
            task.rank,
            'false',
            task.createdAt,
            task.updatedAt,
          ].join(','),
        ),
    );
    expect(lines.at(-1)).toBe('');
    // Three pages of 2, 2 and 1 tasks, each answer checked against the document like any other.
    expect(t.answers.counts.operation - before).toBe(3);
  });

  it('makes the example fail with the problem when the key is refused', async () => {
    await expect(runExample({ TASKS_API_KEY: 'tsk_not-a-key' })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('GET /api/v1/tasks answered 401 unauthenticated'),
    });
  });
});
