import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { asAdmin, createProject, createTask, TaskJson, TestProject } from './support/fixtures';
import { startTestApp, TestApp } from './support/test-app';

const ROOT = path.join(__dirname, '..');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

describe('examples/mirror.ts: a project mirrored from the lists and the event stream', () => {
  let t: TestApp;
  let baseUrl: string;
  let directory: string;
  const running = new Set<ChildProcess>();
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    directory = mkdtempSync(path.join(tmpdir(), 'mirror-'));
  });
  afterAll(async () => {
    for (const child of running) child.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
    await t.close();
  });

  function startMirror(
    project: TestProject,
    file: string,
  ): { child: ChildProcess; exited: Promise<number | null>; stderr: () => string; stdout: () => string } {
    const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['examples/mirror.ts'], {
      cwd: ROOT,
      env: { ...process.env, TASKS_API_URL: baseUrl, TASKS_API_KEY: project.key, MIRROR_FILE: file },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let [stdout, stderr] = ['', ''];
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (running.delete(child), resolve(code))));
    return { child, exited, stderr: () => stderr, stdout: () => stdout };
  }

  async function lastSequence(project: TestProject): Promise<number> {
    let after = 0;
    for (let more = true; more;) {
      const page = (await project.api.get(`/api/v1/events?after=${after}&limit=1000`).expect(200)).body;
      [after, more] = [page.nextAfter, page.hasMore];
    }
    return after;
  }

  /** The mirror's file once it has applied the event `sequence`. */
  async function mirrorAt(file: string, sequence: number, stderr: () => string): Promise<Json> {
    for (let waited = 0; waited < 90_000; waited += 100) {
      if (existsSync(file)) {
        const mirror = JSON.parse(readFileSync(file, 'utf8')) as Json;
        if (mirror.lastEventId === String(sequence)) return mirror;
      }
      await sleep(100);
    }
    throw new Error(`The mirror did not reach event ${sequence}; its errors: ${stderr()}`);
  }

  async function all(project: TestProject, url: string, items_ = 'tasks'): Promise<Json[]> {
    const items: Json[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: Json = (await project.api.get(`${url}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).expect(200)).body;
      items.push(...page[items_]);
      cursor = page.nextCursor;
    }
    return items;
  }

  async function expectEqualToTheLists(project: TestProject, mirror: Json): Promise<void> {
    const byId = (items: Json[]): Record<string, Json> => Object.fromEntries(items.map((item) => [item.id, item]));
    const sortedIds = (refs: { id: string }[]) => refs.map((ref) => ref.id).sort();
    const tasks = byId(await all(project, '/api/v1/tasks'));
    const mirrored = byId(mirror.view.tasks);
    expect(Object.keys(mirrored).sort()).toEqual(Object.keys(tasks).sort());
    for (const [id, task] of Object.entries(tasks)) {
      // The list's fields, as the mirror shows them; dependencies as the task's own answer lists them.
      expect({ id, ...Object.fromEntries(Object.keys(task).map((field) => [field, mirrored[id][field]])) }).toEqual({ id, ...task });
      const { dependencies } = (await project.api.get(`/api/v1/tasks/${id}`).expect(200)).body.task;
      expect({ id, blockedBy: sortedIds(mirrored[id].dependencies.blockedBy), blocks: sortedIds(mirrored[id].dependencies.blocks) }).toEqual({
        id,
        blockedBy: sortedIds(dependencies.blockedBy),
        blocks: sortedIds(dependencies.blocks),
      });
    }
    expect(byId(mirror.view.trash)).toEqual(byId(await all(project, '/api/v1/trash')));
    // Each live task's comments, tombstones included, as its comment list shows them.
    for (const id of Object.keys(tasks))
      expect({ id, comments: mirror.view.comments[id] }).toEqual({ id, comments: await all(project, `/api/v1/tasks/${id}/comments`, 'comments') });
    // Each live task's attachments, as its attachment list shows them, without the expiring download links.
    for (const id of Object.keys(tasks)) {
      const listed = (await project.api.get(`/api/v1/tasks/${id}/attachments`).expect(200)).body.attachments as Json[];
      const metadata = listed.map(({ downloadUrl: _url, downloadUrlExpiresAt: _expires, ...rest }) => rest);
      expect({ id, attachments: mirror.view.attachments[id] ?? [] }).toEqual({ id, attachments: metadata });
    }
    expect(byId(Object.values(mirror.sprints))).toEqual(byId((await project.api.get('/api/v1/sprints').expect(200)).body.sprints));
    expect(byId(Object.values(mirror.labels))).toEqual(byId((await project.api.get('/api/v1/labels').expect(200)).body.labels));
    expect(Object.values(mirror.members)).toEqual(expect.arrayContaining((await project.api.get('/api/v1/members').expect(200)).body.members));
    expect(Object.keys(mirror.members)).toHaveLength((await project.api.get('/api/v1/members').expect(200)).body.members.length);
  }

  /** Changes of every kind a mirror must follow, one after the other, as a team would make them. */
  async function writeChanges(project: TestProject, round: number, tasks: TaskJson[]): Promise<void> {
    const admin = asAdmin(t);
    const [ada, grace] = project.members;
    const [bug, feature] = project.labels;
    const sprint = (await project.api.post('/api/v1/sprints', { name: `Sprint ${round}` }).expect(201)).body.sprint;
    const created: TaskJson[] = [];
    for (let i = 0; i < 4; i++) {
      created.push(
        await createTask(project, {
          title: `Round ${round} task ${i}`,
          assigneeId: i % 2 ? ada.membershipId : grace.membershipId,
          labelIds: i % 2 ? [bug.id] : [bug.id, feature.id],
          sprintId: i < 2 ? sprint.id : null,
        }),
      );
    }
    const subtask = await createTask(project, { title: `Round ${round} subtask`, parentId: created[3].id });
    tasks.push(...created, subtask);
    await project.api.post(`/api/v1/tasks/${created[1].id}/dependencies`, { blockedById: created[0].id }).expect(201);
    await project.api.post(`/api/v1/tasks/${created[2].id}/dependencies`, { blockedById: created[0].id }).expect(201);
    await admin.patch(`/admin/v1/labels/${bug.id}`, { name: `bug ${round}`, color: round % 2 ? '#aa0000' : '#00aa00' }).expect(200);
    await admin.patch(`/admin/v1/members/${ada.membershipId}`, { name: `Ada ${round}` }).expect(200);
    await admin.post(`/admin/v1/sprints/${sprint.id}/activate`).expect(200);
    await project.api.patch(`/api/v1/tasks/${created[0].id}`, { status: 'done', title: `Round ${round} finished` }).expect(200);
    await project.api.patch(`/api/v1/sprints/${sprint.id}`, { goal: `Goal ${round}` }).expect(200);
    await admin.post(`/admin/v1/sprints/${sprint.id}/close`, {}).expect(200);
    await project.api.delete(`/api/v1/tasks/${created[2].id}/dependencies/${created[0].id}`).expect(204);
    // A conversation: a mention, replies, an edit, a tombstone (it keeps one reply), a tombstone
    // gone with its last reply, comments that go to the trash and back (created[0]) or with a purge.
    const comments = (taskId: string) => `/api/v1/tasks/${taskId}/comments`;
    const say = async (taskId: string, body: string, parentId?: string): Promise<Json> =>
      (await project.api.post(comments(taskId), { body, ...(parentId ? { parentId } : {}) }).expect(201)).body.comment;
    const top = await say(created[0].id, `Round ${round}: <@${grace.membershipId}>, a look?`);
    const reply = await say(created[0].id, 'Looking', top.id);
    await say(created[0].id, 'Me too', top.id);
    await project.api.patch(`${comments(created[0].id)}/${top.id}`, { body: `Round ${round}: <@${ada.membershipId}>, a look?` }).expect(200);
    await project.api.delete(`${comments(created[0].id)}/${top.id}`).expect(204);
    await project.api.delete(`${comments(created[0].id)}/${reply.id}`).expect(204);
    const gone = await say(created[1].id, 'Soon gone');
    const last = await say(created[1].id, 'Its only reply', gone.id);
    await project.api.delete(`${comments(created[1].id)}/${gone.id}`).expect(204);
    await project.api.delete(`${comments(created[1].id)}/${last.id}`).expect(204);
    // Attachments: one kept, one deleted, one that goes to the trash and back with created[0].
    const attach = async (taskId: string, name: string): Promise<Json> =>
      (
        await project.api
          .post(`/api/v1/tasks/${taskId}/attachments`)
          .attach('file', Buffer.from(`${name} ${round}\n`), name)
          .expect(201)
      ).body.attachment;
    await attach(created[0].id, 'log.txt');
    const dropped = await attach(created[1].id, 'old.txt');
    await attach(created[1].id, 'spec.txt');
    await project.api.delete(`/api/v1/tasks/${created[1].id}/attachments/${dropped.id}`).expect(204);
    await say(created[3].id, 'Purged with its task');
    await say(subtask.id, `On the subtask, <@${ada.membershipId}>`);
    await project.api.delete(`/api/v1/tasks/${created[3].id}`).expect(204);
    await project.api.delete(`/api/v1/tasks/${created[0].id}`).expect(204);
    await project.api.post(`/api/v1/trash/${created[0].id}/restore`).expect(200);
    await project.api.delete(`/api/v1/trash/${created[3].id}`).expect(204);
    const label = (await admin.post(`/admin/v1/projects/${project.id}/labels`, { name: `new ${round}`, color: '#123456' }).expect(201)).body.label;
    await project.api.patch(`/api/v1/tasks/${created[1].id}`, { labelIds: [label.id] }).expect(200);
    await admin.post(`/admin/v1/projects/${project.id}/members`, { name: `Member ${round}` }).expect(201);
  }

  it("reads the feed's last sequence before the lists, then streams after it", async () => {
    const project = await createProject(t, 'Mirror start');
    const tasks: TaskJson[] = [];
    await writeChanges(project, 0, tasks);
    const at = await lastSequence(project);
    const file = path.join(directory, 'start.json');
    const requests: string[] = [];
    const record = (req: IncomingMessage) => requests.push(`${req.method} ${req.url?.split('?')[0]} ${req.headers['last-event-id'] ?? ''}`.trim());
    t.app.getHttpServer().on('request', record);
    const mirror = startMirror(project, file);
    try {
      for (let waited = 0; !requests.some((line) => line.startsWith('GET /api/v1/events/stream')); waited += 100) {
        if (waited > 60_000) throw new Error(`The mirror opened no stream; its errors: ${mirror.stderr()}`);
        await sleep(100);
      }
    } finally {
      t.app.getHttpServer().off('request', record);
    }
    const lists = requests.findIndex((line) => line === 'GET /api/v1/members');
    expect(requests[0]).toBe('GET /api/v1/events');
    expect(lists).toBeGreaterThan(0);
    expect(requests.findIndex((line) => line.startsWith('GET /api/v1/events/stream'))).toBeGreaterThan(lists);
    expect(requests).toContain(`GET /api/v1/events/stream ${at}`);
    await expectEqualToTheLists(project, await mirrorAt(file, at, mirror.stderr));
    mirror.child.kill('SIGTERM');
    expect(await mirror.exited).toBe(0);
    // What it did, said as it did it: briefly, a line a step.
    const said = mirror.stdout().trim().split('\n');
    expect(said[0]).toMatch(/^Mirroring the project of this key at .* into .*start\.json; Ctrl\+C stops$/);
    expect(said).toContain('Loading the project from the lists: members, labels, sprints, the trash, then each task...');
    expect(said).toContainEqual(expect.stringMatching(new RegExp(`^Loaded \\d+ tasks, .* as of event ${at}$`)));
    expect(said).toContain(`Following the event stream after event ${at}`);
    expect(said.at(-1)).toBe(`Stopped; ${file} holds the project as of event ${at}`);
  }, 120_000);

  it('ends equal to the lists after changes made while it loads, follows and restarts; a label rename reaches every task that shows it', async () => {
    const project = await createProject(t, 'Mirrored');
    const tasks: TaskJson[] = [];
    await writeChanges(project, 0, tasks);
    const file = path.join(directory, 'mirror.json');

    // Started while another client writes: its load and the stream overlap the changes.
    let mirror = startMirror(project, file);
    const writing = (async () => {
      for (let round = 1; round <= 3; round++) await writeChanges(project, round, tasks);
    })();
    await writing;
    let view = await mirrorAt(file, await lastSequence(project), mirror.stderr);
    await expectEqualToTheLists(project, view);
    const renamed = view.view.tasks.filter((task: Json) => task.labels.some((label: Json) => label.id === project.labels[0].id));
    expect(renamed.length).toBeGreaterThan(0);
    for (const task of renamed) expect(task.labels.find((label: Json) => label.id === project.labels[0].id).name).toBe('bug 3');

    // Stopped, the project changes; started again, it resumes from its file with Last-Event-ID.
    mirror.child.kill('SIGTERM');
    expect(await mirror.exited).toBe(0);
    const stoppedAt = Number(JSON.parse(readFileSync(file, 'utf8')).lastEventId);
    await writeChanges(project, 4, tasks);
    const requests: string[] = [];
    const record = (req: IncomingMessage) => requests.push(`${req.method} ${req.url?.split('?')[0]} ${req.headers['last-event-id'] ?? ''}`.trim());
    t.app.getHttpServer().on('request', record);
    mirror = startMirror(project, file);
    view = await mirrorAt(file, await lastSequence(project), mirror.stderr);
    t.app.getHttpServer().off('request', record);
    // No load from the lists this time: one stream request, after the last event it had, and the
    // comments and attachments of the tasks that came back from the trash meanwhile (no event brings them).
    const restored = tasks.slice(-5)[0].id;
    expect(requests.filter((line) => !/^GET \/api\/v1\/events( |$)/.test(line))).toEqual([
      `GET /api/v1/events/stream ${stoppedAt}`,
      `GET /api/v1/tasks/${restored}/comments`,
      `GET /api/v1/tasks/${restored}/attachments`,
    ]);
    expect(Number(view.lastEventId)).toBeGreaterThan(stoppedAt);
    await expectEqualToTheLists(project, view);
    mirror.child.kill('SIGTERM');
    expect(await mirror.exited).toBe(0);
  }, 300_000);
});
