import type { Test } from 'supertest';
import { asAdmin, createProject, createTask, KeyClient, TestProject } from './support/fixtures';
import {
  readSnapshot,
  requestLine,
  Snapshot,
  SNAPSHOT_COMMAND,
  snapshotFiles,
  snapshotText,
  StatementRecorder,
  WRITING,
  writeSnapshots,
} from './support/statement-snapshots';
import { engine, startTestApp, TestApp } from './support/test-app';

// The statements the service sends on its hot paths, checked in under sql/ (docs/statements.md):
// a fixed scenario of requests runs through HTTP, each request's statements are recorded as the
// service sends them, and each file must say exactly that. A change to the SQL a request sends
// shows in the diff of its file; a file that no longer says it fails here, until
// `npm run sql:snapshot` writes the files again.
describe('statement snapshots (sql/, docs/statements.md)', () => {
  let t: TestApp;
  let recorder: StatementRecorder;
  let project: TestProject;
  let admin: KeyClient;
  const snapshots: Snapshot[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    recorder = new StatementRecorder(t);
    admin = asAdmin(t);
    project = await createProject(t, 'Snapshots');
    await runScenario();
  });
  afterAll(() => t.close());

  /** Sends one request, checks its status, and keeps its statements as the snapshot `name`. */
  async function snap(name: string, about: string, send: () => Test, status: number): Promise<Record<string, unknown>> {
    const test = send();
    const request = `${test.method} ${test.url.replace(/^https?:\/\/[^/]+/, '')}`;
    let body: Record<string, unknown> = {};
    const statements = await recorder.record(async () => {
      const res = await test;
      if (res.status !== status) throw new Error(`${name}: answered ${res.status}, not ${status}: ${res.text}`);
      body = res.body as Record<string, unknown>;
    });
    const [keyLookUp] = snapshots;
    const afterKeyLookUp = keyLookUp && keyLookUp.statements.every((sent, i) => statements[i]?.text === sent.text);
    snapshots.push(
      afterKeyLookUp
        ? {
            name,
            request,
            about,
            statements: statements.slice(keyLookUp.statements.length),
            after: { name: keyLookUp.name, about: 'the key look-up' },
          }
        : { name, request, about, statements },
    );
    return body;
  }

  async function runScenario(): Promise<void> {
    const { api } = project;
    const [ada, grace] = project.members.map((member) => member.membershipId);
    const [bug, feature, docs] = project.labels.map((label) => label.id);
    // The key's lastUsedAt is written at its first use (through Prisma Client, not snapshotted).
    await api.get('/api/v1/tasks').expect(200);
    // What every /api/v1 request sends first: its key looked up. The other files leave it out.
    await snap(
      'every-request',
      'What every /api/v1 request sends before its own statements: its key looked up (src/auth).',
      // A query refused before any statement of its own: only the key look-up is sent.
      () => api.get('/api/v1/tasks?limit=0'),
      400,
    );

    // Sprints: the one the tasks go into, which becomes active, and the one its open tasks move to.
    const sprint1 = (await snap('sprints/create', 'A sprint created (planned).', () => api.post('/api/v1/sprints', { name: 'Sprint 1' }), 201))
      .sprint as { id: string };
    const sprint2 = (await api.post('/api/v1/sprints', { name: 'Sprint 2' }).expect(201)).body.sprint as { id: string };
    await snap(
      'sprints/patch',
      'A sprint renamed, its goal set.',
      () => api.patch(`/api/v1/sprints/${sprint1.id}`, { name: 'Sprint one', goal: 'Ship' }),
      200,
    );

    const first = await createTask(project, { title: 'First', estimate: 3, sprintId: sprint1.id });
    await snap(
      'sprints/activate',
      'The app activates a planned sprint (admin interface): ChangeLog.record with the ledger’s scope committed.',
      () => admin.post(`/admin/v1/sprints/${sprint1.id}/activate`),
      200,
    );

    // Task writes, each with ChangeLog.record and the ledger's CTEs for the active sprint.
    const plain = (
      await snap(
        'tasks/create',
        'A task created with no reference (no sprint, assignee, label nor parent).',
        () => api.post('/api/v1/tasks', { title: 'Plain' }),
        201,
      )
    ).task as { id: string };
    const full = (
      await snap(
        'tasks/create-with-references',
        'A task created into the active sprint, with an assignee, labels and a parent: the references locked and read first.',
        () =>
          api.post('/api/v1/tasks', {
            title: 'Full',
            description: 'Every reference',
            priority: 'high',
            estimate: 2,
            sprintId: sprint1.id,
            assigneeId: ada,
            labelIds: [bug, feature],
            parentId: first.id,
          }),
        201,
      )
    ).task as { id: string };
    await snap(
      'tasks/bulk-create',
      'Three tasks created in one request (decisions.md section 16).',
      () =>
        api.post('/api/v1/tasks/bulk', {
          tasks: [{ title: 'Bulk 1' }, { title: 'Bulk 2', sprintId: sprint1.id, labelIds: [docs] }, { title: 'Bulk 3', assigneeId: grace }],
        }),
      201,
    );
    await snap(
      'tasks/patch',
      'A task’s status, estimate and sprint changed (it enters the active sprint: the ledger records it).',
      () => api.patch(`/api/v1/tasks/${plain.id}`, { status: 'in_progress', estimate: 5, sprintId: sprint1.id }),
      200,
    );
    await snap(
      'tasks/patch-labels',
      'A task’s labels set (its current labels read after the lock).',
      () => api.patch(`/api/v1/tasks/${plain.id}`, { labelIds: [docs] }),
      200,
    );
    await snap(
      'tasks/patch-unchanged',
      'A PATCH that changes nothing: no write, the task read again.',
      () => api.patch(`/api/v1/tasks/${plain.id}`, { title: 'Plain' }),
      200,
    );
    await snap('tasks/detail', 'A task in full.', () => api.get(`/api/v1/tasks/${full.id}`), 200);

    // Reads.
    await snap('tasks/list', 'The first page of the task list (newest first), read for the first time.', () => api.get('/api/v1/tasks?limit=2'), 200);
    await snap(
      'tasks/list-unchanged',
      'The same page again, nothing changed since: the version read alone (TaskListCache).',
      () => api.get('/api/v1/tasks?limit=2'),
      200,
    );
    await snap(
      'tasks/list-filtered',
      'A filtered list: by status, assignee and label.',
      () => api.get(`/api/v1/tasks?status=backlog,in_progress&assigneeId=${ada}&labelId=${bug}`),
      200,
    );
    const rankPage = await snap(
      'tasks/list-by-rank',
      'The list in backlog order (sort=rank).',
      () => api.get('/api/v1/tasks?sort=rank&limit=2'),
      200,
    );
    await snap(
      'tasks/list-by-rank-next-page',
      'The next page of it, from its cursor.',
      () => api.get(`/api/v1/tasks?sort=rank&limit=2&cursor=${encodeURIComponent(rankPage.nextCursor as string)}`),
      200,
    );

    await snap(
      'tasks/list-filter-expression',
      'A list filtered by an expression (decisions.md section 25): its names looked up, one statement per kind, then one condition.',
      () =>
        api.get(`/api/v1/tasks?limit=2&filter=${encodeURIComponent('assignee = Ada and (label = bug or priority = urgent) and not due < today')}`),
      200,
    );
    await snap(
      'tasks/list-searched',
      'A searched list (decisions.md section 25): its matches counted up to 1 001, then, as they are few here, the page and the total taken from them.',
      () => api.get('/api/v1/tasks?search=bulk&limit=2'),
      200,
    );
    const relevancePage = await snap(
      'tasks/list-by-relevance',
      'A searched list, best match first (sort=relevance): every match ranked.',
      () => api.get('/api/v1/tasks?search=bulk&sort=relevance&limit=1'),
      200,
    );
    await snap(
      'tasks/list-by-relevance-next-page',
      'The next page of it, from its cursor (score, createdAt, id).',
      () => api.get(`/api/v1/tasks?search=bulk&sort=relevance&limit=1&cursor=${encodeURIComponent(relevancePage.nextCursor as string)}`),
      200,
    );

    // Comments (decisions.md section 23).
    const comments = `/api/v1/tasks/${plain.id}/comments`;
    const top = (
      await snap(
        'comments/create',
        'A comment that mentions a member: its task locked FOR SHARE and the members read, then the comment, its first\nrevision and its mention with ChangeLog.record.',
        () => api.post(comments, { body: `Hello <@${ada}>` }),
        201,
      )
    ).comment as { id: string };
    const reply = (
      await snap(
        'comments/create-reply',
        'A reply: its parent locked FOR KEY SHARE after the task.',
        () => api.post(comments, { body: 'A reply', parentId: top.id }),
        201,
      )
    ).comment as { id: string };
    await snap(
      'comments/list',
      'The first page of a task’s comments, oldest first, with the total and the next cursor.',
      () => api.get(`${comments}?limit=1`),
      200,
    );
    await snap(
      'comments/patch',
      'A comment’s new text: its next revision, its mentions replaced.',
      () => api.patch(`${comments}/${top.id}`, { body: `Hello again <@${grace}>` }),
      200,
    );
    await snap(
      'comments/delete',
      'A top-level comment with a reply deleted: it stays as a tombstone, its revisions and mentions go.',
      () => api.delete(`${comments}/${top.id}`),
      204,
    );
    await snap(
      'comments/delete-last-reply',
      'The last reply of a tombstone deleted: its parent locked FOR UPDATE first, both go.',
      () => api.delete(`${comments}/${reply.id}`),
      204,
    );

    // The backlog order and dependencies.
    await snap(
      'tasks/move',
      'A task moved before another (decisions.md section 18).',
      () => api.post(`/api/v1/tasks/${plain.id}/move`, { before: first.id }),
      200,
    );
    await snap(
      'tasks/move-many',
      'Two tasks moved to the bottom, in that order.',
      () => api.post('/api/v1/tasks/move', { taskIds: [full.id, plain.id], to: 'bottom' }),
      200,
    );
    // Both tasks are locked by id: the blocked one has the lower id, so that the two locks come in one order at every run.
    const [blocked, blocker] = [plain.id, first.id].sort();
    await snap(
      'dependencies/add',
      'A dependency added: the cycle check, then the link.',
      () => api.post(`/api/v1/tasks/${blocked}/dependencies`, { blockedById: blocker }),
      201,
    );
    await snap('dependencies/remove', 'The dependency removed.', () => api.delete(`/api/v1/tasks/${blocked}/dependencies/${blocker}`), 204);

    // The trash.
    await snap('tasks/delete', 'A task with a subtask sent to the trash.', () => api.delete(`/api/v1/tasks/${first.id}`), 204);
    await snap('trash/list', 'The trash, most recently deleted first.', () => api.get('/api/v1/trash'), 200);
    await snap('trash/restore', 'The task brought back with its subtask.', () => api.post(`/api/v1/trash/${first.id}/restore`), 200);
    await api.delete(`/api/v1/tasks/${full.id}`).expect(204);
    await snap('trash/purge', 'A trashed subtask destroyed for good.', () => api.delete(`/api/v1/trash/${full.id}`), 204);

    // Sprint reports and the close.
    await snap(
      'sprints/report',
      'The active sprint’s report, computed from sprint_scope.',
      () => api.get(`/api/v1/sprints/${sprint1.id}/report`),
      200,
    );
    await snap('sprints/burndown', 'The active sprint’s burndown, from sprint_ledger.', () => api.get(`/api/v1/sprints/${sprint1.id}/burndown`), 200);
    await snap(
      'sprints/close',
      'The app closes the active sprint (admin interface), its open tasks moving to a planned one: the ledger’s rows for\nthe tasks that leave, then the frozen report, then ChangeLog.record.',
      () => admin.post(`/admin/v1/sprints/${sprint1.id}/close`, { moveOpenTasksTo: sprint2.id }),
      200,
    );
    await snap(
      'sprints/report-closed',
      'A closed sprint’s report: the one frozen at its close.',
      () => api.get(`/api/v1/sprints/${sprint1.id}/report`),
      200,
    );
    await snap('reports/velocity', 'Velocity over the last closed sprints.', () => api.get('/api/v1/reports/velocity?last=3'), 200);
    await snap(
      'sprints/delete',
      'A sprint with tasks deleted: its tasks leave it, its ledger goes with it.',
      () => api.delete(`/api/v1/sprints/${sprint2.id}`),
      204,
    );

    // The change feed.
    await snap('events/feed', 'The change feed from the start.', () => api.get('/api/v1/events?after=0&limit=5'), 200);
    await snap(
      'events/feed-by-type',
      'The change feed of some event types only.',
      () => api.get('/api/v1/events?after=0&types=task.created,sprint.closed'),
      200,
    );
  }

  if (WRITING) {
    it(`writes the snapshots (${SNAPSHOT_COMMAND})`, () => {
      if (engine !== 'pglite') return;
      writeSnapshots(snapshots);
    });
    return;
  }

  it('has a file for each request of the scenario, and none for a request it no longer sends', () => {
    const missing = snapshots.map((snapshot) => snapshot.name).filter((name) => readSnapshot(name) === null);
    const extra = snapshotFiles().filter((name) => !snapshots.some((snapshot) => snapshot.name === name));
    if (missing.length + extra.length > 0) {
      throw new Error(
        `The statement snapshots under sql/ are stale (run \`${SNAPSHOT_COMMAND}\` and commit the files):\n` +
          missing.map((name) => `  missing: sql/${name}.sql`).join('\n') +
          extra.map((name) => `  no longer written: sql/${name}.sql`).join('\n'),
      );
    }
  });

  it('finds in each file exactly the statements its request sends', () => {
    const stale: string[] = [];
    for (const snapshot of snapshots) {
      const expected = readSnapshot(snapshot.name);
      if (expected === null) continue;
      try {
        expect(snapshotText(snapshot)).toBe(expected);
      } catch (error) {
        stale.push(`sql/${snapshot.name}.sql (${requestLine(snapshot.request)}):\n${(error as Error).message}`);
      }
    }
    if (stale.length > 0) {
      throw new Error(
        `${stale.length} statement snapshot(s) no longer say what the service sends. If the change is meant, run \`${SNAPSHOT_COMMAND}\` ` +
          `and commit the files (the diff shows the SQL change). Received: what the service sends now; Expected: the file.\n\n${stale.join('\n\n')}`,
      );
    }
  });
});
