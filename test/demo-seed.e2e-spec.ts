import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ALL_PERMISSIONS } from '../src/auth/permissions';
import { TaskJson, withKey } from './support/fixtures';
import { startServerProcess } from './support/server-process';
import { engine, startTestApp, TestApp } from './support/test-app';

// The demo project belongs to the embedded database only (decisions.md section 9).
(engine === 'pglite' ? describe : describe.skip)('demo project on a new embedded database', () => {
  let dataDir: string;
  let t: TestApp | undefined;
  let printed: string[];
  let key: string;

  let logged: string[];

  /** Starts the service on `dataDir`, keeping what it prints on stdout and the messages it logs. */
  async function start(): Promise<TestApp> {
    printed = [];
    logged = [];
    const logDestination = { write: (line: string) => void logged.push(String(JSON.parse(line).msg)) };
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (printed.push(String(chunk)), true));
    try {
      return await startTestApp({ dataDir, seedDemoProject: true, logLevel: 'info' }, undefined, { logDestination });
    } finally {
      write.mockRestore();
    }
  }

  /** `npm run demo:key` on `dataDir`, as built (`npm run demo:key` builds dist/ first when stale; the global setup has built it). */
  const demoKey = () =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['dist/demo/demo-key.cli.js'],
        { cwd: path.join(__dirname, '..'), env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir } },
        (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'demo-'));
    t = await start();
    key = /(tsk_[A-Za-z0-9_-]{43})/.exec(printed.join(''))?.[1] ?? '';
  });
  afterAll(async () => {
    await t?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints a key with every permission once', async () => {
    expect(key).not.toBe('');
    expect(printed.join('')).toContain(`Authorization: Bearer ${key}`);
    await withKey(t!, key).get('/api/v1/members').expect(200);
    const row = await t!.prisma.apiKey.findFirstOrThrow({ where: { prefix: key.slice(0, 12) } });
    expect([...row.permissions].sort()).toEqual([...ALL_PERMISSIONS].sort());
  });

  it('gives the demo project sprints and tasks worth exploring, each written through the API services with its history', async () => {
    const api = withKey(t!, key);
    const { sprints } = (await api.get('/api/v1/sprints').expect(200)).body;
    expect(sprints.map((sprint: { name: string; status: string }) => [sprint.name, sprint.status])).toEqual([
      ['Sprint 2', 'planned'],
      ['Sprint 1', 'active'],
      ['Sprint 0', 'closed'],
    ]);
    const list = (await api.get('/api/v1/tasks?limit=100').expect(200)).body;
    const tasks: TaskJson[] = list.tasks;
    expect(list.total).toBe(12);
    expect(tasks.some((task) => task.labels.length > 0)).toBe(true);
    expect(tasks.some((task) => task.assignee !== null)).toBe(true);
    expect(tasks.some((task) => task.dueDate !== null)).toBe(true);
    expect(tasks.filter((task) => task.sprint?.name === 'Sprint 1').length).toBeGreaterThanOrEqual(4);
    expect(tasks.filter((task) => task.parentId !== null)).toHaveLength(1);
    expect(tasks.filter((task) => task.blocked)).toHaveLength(1);
    const blocked = (await api.get(`/api/v1/tasks/${tasks.find((task) => task.blocked)!.id}`).expect(200)).body.task;
    expect(blocked.dependencies.blockedBy).toHaveLength(1);

    // The one write path: every task has its creation in history, by the demo key, as a client's would.
    for (const task of tasks) {
      const { history } = (await api.get(`/api/v1/tasks/${task.id}/history`).expect(200)).body;
      expect(history[history.length - 1]).toMatchObject({ action: 'created', actor: 'Demo key (API)' });
    }
    const { history } = (await api.get(`/api/v1/tasks/${blocked.id}/history`).expect(200)).body;
    expect(history[0]).toMatchObject({ action: 'dependency_added' });
  });

  it("starts the demo project's feed with its members' and labels' creation, so that a mirror reading from 0 knows every one a task shows", async () => {
    const api = withKey(t!, key);
    const { events } = (await api.get('/api/v1/events?limit=5').expect(200)).body;
    const { members } = (await api.get('/api/v1/members').expect(200)).body;
    const { labels } = (await api.get('/api/v1/labels').expect(200)).body;
    expect(events.map((event: { type: string }) => event.type)).toEqual([
      'member.created',
      'member.created',
      'label.created',
      'label.created',
      'label.created',
    ]);
    const data = events.map((event: { data: object }) => event.data);
    expect(data).toEqual(expect.arrayContaining([...members.map((member: object) => ({ member })), ...labels.map((label: object) => ({ label }))]));
    expect(events.every((event: { actor: string }) => event.actor === 'App')).toBe(true);
  });

  it('plans worth looking at: estimates, a backlog order, and a closed sprint whose report tells what it committed to and delivered', async () => {
    const api = withKey(t!, key);
    const ordered: TaskJson[] = (await api.get('/api/v1/tasks?sort=rank&limit=100').expect(200)).body.tasks;
    expect(ordered.slice(0, 2).map((task) => task.title)).toEqual(['Crash when a due date is cleared', 'Slow search with more than 10 000 tasks']);
    expect(ordered.filter((task) => task.estimate !== null).length).toBeGreaterThanOrEqual(8);
    const { sprints } = (await api.get('/api/v1/sprints').expect(200)).body;
    const closed = sprints.find((sprint: TaskJson) => sprint.status === 'closed');
    const { report } = (await api.get(`/api/v1/sprints/${closed.id}/report`).expect(200)).body;
    const tally = (tasks: number, points: number) => ({ tasks, points, unestimated: 0 });
    expect(report).toMatchObject({
      committed: tally(3, 16),
      added: tally(1, 2),
      removed: tally(0, 0),
      reestimated: 3,
      completed: tally(3, 13),
      carriedOver: tally(1, 8),
      scope: tally(4, 21),
    });
    const velocity = (await api.get('/api/v1/reports/velocity').expect(200)).body;
    expect(velocity.average).toEqual({ tasks: 3, points: 13 });
  });

  it('has a conversation to read: comments with a mention, a reply and an edit, written with the demo key', async () => {
    const api = withKey(t!, key);
    const tasks: TaskJson[] = (await api.get('/api/v1/tasks?limit=100').expect(200)).body.tasks;
    const crash = tasks.find((task) => task.title === 'Crash when a due date is cleared')!;
    const { comments, total } = (await api.get(`/api/v1/tasks/${crash.id}/comments`).expect(200)).body;
    expect(total).toBe(2);
    const [first, reply] = comments;
    expect(first.mentions).toEqual([{ membershipId: expect.any(String), name: 'Grace Hopper' }]);
    expect(first.editedAt).not.toBeNull();
    expect(first.author.name).toBe('Demo key (API)');
    expect(reply.parentId).toBe(first.id);
    const { revisions } = (await api.get(`/api/v1/tasks/${crash.id}/comments/${first.id}/revisions`).expect(200)).body;
    expect(revisions.map((revision: { number: number }) => revision.number)).toEqual([2, 1]);
  });

  it('has an attachment: the crash’s log, uploaded with the demo key, its bytes served', async () => {
    const api = withKey(t!, key);
    const tasks: TaskJson[] = (await api.get('/api/v1/tasks?limit=100').expect(200)).body.tasks;
    const crash = tasks.find((task) => task.title === 'Crash when a due date is cleared')!;
    const { attachments } = (await api.get(`/api/v1/tasks/${crash.id}/attachments`).expect(200)).body;
    expect(attachments).toEqual([
      expect.objectContaining({ name: 'board-crash.log', contentType: 'text/plain', author: expect.objectContaining({ name: 'Demo key (API)' }) }),
    ]);
    const res = await api.get(`/api/v1/tasks/${crash.id}/attachments/${attachments[0].id}/content`).responseType('blob').expect(200);
    expect(Buffer.from(res.body as Buffer).toString()).toContain('TypeError');
  });

  it('keeps the data across restarts, and prints no key again', async () => {
    await t!.close();
    t = undefined;
    t = await start();
    expect(printed.join('')).not.toMatch(/tsk_/);
    expect(printed.join('')).not.toMatch(/demo project was created/);
    await withKey(t, key).get('/api/v1/members').expect(200);
    expect(await t.prisma.project.count()).toBe(1);
    expect(await t.prisma.task.count()).toBe(12);
  });

  it('says at a restart on the existing embedded database why no key is printed, and how to get one', () => {
    const said = logged.filter((msg) => msg.includes('demo key'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('printed then, once');
    expect(said[0]).toContain('npm run demo:key');
    expect(said[0]).toContain('POST /admin/v1/projects/{projectId}/keys');
  });

  it('refuses `npm run demo:key` (exit 1, saying why and what to do) while a server holds the embedded database, and writes no key', async () => {
    const keys = await t!.prisma.apiKey.count();
    const { code, stdout, stderr } = await demoKey();
    expect(code).toBe(1);
    expect(stdout).not.toMatch(/tsk_/);
    expect(stderr).toContain(`holds the embedded database in ${dataDir}`);
    expect(stderr).toContain(`pid ${process.pid}`);
    expect(stderr).toContain('Stop that server');
    expect(await t!.prisma.apiKey.count()).toBe(keys);
    // Nor can a second server take it.
    await expect(startTestApp({ dataDir })).rejects.toThrow(/in use by another process/);
  });

  it('refuses `npm run demo:key` while a server started as `npm start` runs, and issues a key once it was killed with SIGKILL (no stale lock)', async () => {
    await t!.close();
    t = undefined;
    const server = await startServerProcess({ DATA_DIR: dataDir });
    try {
      const refused = await demoKey();
      expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining(`pid ${server.child.pid}`)]);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    const { code, stdout } = await demoKey();
    expect(code).toBe(0);
    expect(stdout).toMatch(/tsk_[A-Za-z0-9_-]{43}/);
  });

  it('issues a new demo key with `npm run demo:key` (server stopped) when the printed one is lost', async () => {
    const { code, stdout } = await demoKey();
    expect(code).toBe(0);
    const recovered = /(tsk_[A-Za-z0-9_-]{43})/.exec(stdout)?.[1];
    expect(recovered).toBeDefined();
    expect(recovered).not.toBe(key);
    t = await start();
    const members = await withKey(t, recovered!).get('/api/v1/members').expect(200);
    expect(members.body.members.map((member: { name: string }) => member.name).sort()).toEqual(['Ada Lovelace', 'Grace Hopper']);
    await withKey(t, recovered!).post('/api/v1/sprints', { name: 'After recovery' }).expect(201);
  });
});
