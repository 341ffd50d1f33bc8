import { createTask, ISO_TIMESTAMP, NO_SUCH_ID, useProject } from './support/fixtures';
import { taskKeys } from '../src/tasks/task-view.sql';
import { useTestApp } from './support/test-app';

// A task's keys in full, as TASK_FIELDS and TASK_RELATION_VIEWS declare them (no list kept here).
const DETAIL_KEYS = taskKeys('detail').sort();

describe('tasks', () => {
  const t = useTestApp();
  const project = useProject(t);
  const other = useProject(t, 'Other project');

  const historyOf = (taskId: string) => t.prisma.historyEntry.findMany({ where: { taskId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });

  describe('POST /api/v1/tasks', () => {
    it('creates a task with the defaults, answers 201 with it in full and a Location header', async () => {
      const res = await project.api.post('/api/v1/tasks', { title: 'Write the spec' }).expect(201);
      const task = res.body.task;
      expect(Object.keys(task).sort()).toEqual(DETAIL_KEYS);
      expect(task).toMatchObject({
        projectId: project.id,
        title: 'Write the spec',
        description: null,
        status: 'backlog',
        priority: 'none',
        parentId: null,
        assignee: null,
        labels: [],
        sprint: null,
        dueDate: null,
        completedAt: null,
        blocked: false,
        dependencies: { blockedBy: [], blocks: [] },
      });
      expect(task.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(task.createdAt).toMatch(ISO_TIMESTAMP);
      expect(task.updatedAt).toBe(task.createdAt);
      expect(res.headers.location).toBe(`/api/v1/tasks/${task.id}`);
      expect(await t.prisma.task.count({ where: { id: task.id, projectId: project.id } })).toBe(1);
    });

    it('stores every field given: description, status, priority, assignee, labels, parent, due date', async () => {
      const parent = await createTask(project);
      const [bug, docs] = [project.labels[0], project.labels[2]];
      const task = await createTask(project, {
        title: 'Everything',
        description: '# Heading\n\nBody',
        status: 'in_review',
        priority: 'urgent',
        assigneeId: project.members[1].membershipId,
        labelIds: [docs.id, bug.id],
        parentId: parent.id,
        dueDate: '2026-12-24',
      });
      expect(task).toMatchObject({
        description: '# Heading\n\nBody',
        status: 'in_review',
        priority: 'urgent',
        assignee: { membershipId: project.members[1].membershipId, name: 'Grace' },
        labels: [bug, docs],
        parentId: parent.id,
        dueDate: '2026-12-24',
      });
    });

    it('records a created entry attributed to "<key name> (API)"', async () => {
      const task = await createTask(project, { title: 'Tracked', priority: 'high' });
      const entries = await historyOf(task.id);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ action: 'created', actor: 'Test key (API)' });
      expect(entries[0].changes).toEqual(
        expect.arrayContaining([
          { field: 'title', from: null, to: 'Tracked' },
          { field: 'priority', from: null, to: 'high' },
        ]),
      );
    });

    it('sets completedAt when a task is created directly in done', async () => {
      const task = await createTask(project, { status: 'done' });
      expect(task.completedAt).toMatch(ISO_TIMESTAMP);
    });

    it('treats labelIds as a set: duplicates collapse', async () => {
      const bug = project.labels[0];
      const task = await createTask(project, { labelIds: [bug.id, bug.id, bug.id] });
      expect(task.labels).toEqual([bug]);
    });

    it('counts the title in code points: 200 emoji are valid, 201 are not', async () => {
      await project.api.post('/api/v1/tasks', { title: '😀'.repeat(200) }).expect(201);
      const res = await project.api.post('/api/v1/tasks', { title: '😀'.repeat(201) }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'title', message: 'must be 1 to 200 characters' }] });
    });

    it('rejects a title that is empty or only white space', async () => {
      for (const title of ['', '   ', '\t\n']) {
        const res = await project.api.post('/api/v1/tasks', { title });
        expect([res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', 'title']);
      }
    });

    it('accepts a description of 10 000 characters and rejects 10 001', async () => {
      await project.api.post('/api/v1/tasks', { title: 'Long', description: 'é'.repeat(10_000) }).expect(201);
      const res = await project.api.post('/api/v1/tasks', { title: 'Longer', description: 'é'.repeat(10_001) }).expect(400);
      expect(res.body.errors[0].field).toBe('description');
    });

    it('rejects an unknown field with 400 unknown_field and creates nothing', async () => {
      const before = await t.prisma.task.count({ where: { projectId: project.id } });
      const res = await project.api.post('/api/v1/tasks', { title: 'X', storyPoints: 3 }).expect(400);
      expect(res.body).toMatchObject({ code: 'unknown_field', errors: [{ field: 'storyPoints' }] });
      expect(await t.prisma.task.count({ where: { projectId: project.id } })).toBe(before);
    });

    it('rejects values of the wrong type or outside the allowed values', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ title: 7 }, 'title'],
        [{ status: 'open' }, 'status'],
        [{ priority: 'critical' }, 'priority'],
        [{ labelIds: 'x' }, 'labelIds'],
        [{ labelIds: [1] }, 'labelIds'],
        [{ assigneeId: 5 }, 'assigneeId'],
        [{ description: 3 }, 'description'],
      ];
      for (const [body, field] of cases) {
        const res = await project.api.post('/api/v1/tasks', { title: 'T', ...body });
        expect([res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', field]);
      }
    });

    it('rejects null where nothing can be cleared: title, status, priority, labelIds', async () => {
      for (const field of ['title', 'status', 'priority', 'labelIds']) {
        const res = await project.api.post('/api/v1/tasks', { title: 'T', [field]: null });
        expect([res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', field]);
      }
    });

    it('accepts only real calendar dates written YYYY-MM-DD as dueDate', async () => {
      for (const dueDate of ['2026-02-30', '2026-13-01', '2026-1-5', '2026-02-28T00:00:00Z', '28/02/2026', '2025-02-29']) {
        const res = await project.api.post('/api/v1/tasks', { title: 'T', dueDate });
        expect([res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', 'dueDate']);
      }
      expect((await createTask(project, { dueDate: '2028-02-29' })).dueDate).toBe('2028-02-29');
    });

    it('accepts calendar dates of the first century AD, and refuses year 0, which no calendar has', async () => {
      const task = await createTask(project, { dueDate: '0050-06-01' });
      expect(task.dueDate).toBe('0050-06-01');
      expect((await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task.dueDate).toBe('0050-06-01');
      const listed = await project.api.get('/api/v1/tasks?dueBefore=0050-06-01').expect(200);
      expect(listed.body.tasks.map((item: { id: string }) => item.id)).toEqual([task.id]);
      const res = await project.api.post('/api/v1/tasks', { title: 'T', dueDate: '0000-01-01' });
      expect([res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', 'dueDate']);
    });

    it('refuses text with a NUL character (PostgreSQL cannot store it) as 400, and creates nothing', async () => {
      const before = await t.prisma.task.count();
      for (const body of [{ title: 'a\u0000b' }, { title: 'T', description: '\u0000' }]) {
        const res = await project.api.post('/api/v1/tasks', body);
        expect([res.status, res.body.code, res.body.errors?.[0]?.message]).toEqual([
          400,
          'validation_failed',
          'must not contain the NUL character (U+0000)',
        ]);
      }
      expect(await t.prisma.task.count()).toBe(before);
      const search = await project.api.get('/api/v1/tasks?q=%00');
      expect([search.status, search.body.code, search.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', 'q']);
    });

    it('answers 404 when assigneeId, labelIds, sprintId or parentId belongs to another project, and creates nothing', async () => {
      const theirTask = await createTask(other);
      const theirSprint = (await other.api.post('/api/v1/sprints', { name: 'Theirs' })).body.sprint;
      const before = await t.prisma.task.count();
      for (const body of [
        { assigneeId: other.members[0].membershipId },
        { labelIds: [project.labels[0].id, other.labels[0].id] },
        { sprintId: theirSprint?.id ?? NO_SUCH_ID },
        { parentId: theirTask.id },
      ]) {
        const res = await project.api.post('/api/v1/tasks', { title: 'T', ...body });
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
      expect(await t.prisma.task.count()).toBe(before);
    });

    it('answers 404 for referenced ids that do not exist or are not ids at all', async () => {
      for (const body of [{ assigneeId: NO_SUCH_ID }, { labelIds: ['nope'] }, { sprintId: 'sprint-1' }, { parentId: NO_SUCH_ID }]) {
        const res = await project.api.post('/api/v1/tasks', { title: 'T', ...body });
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
    });

    it('answers 404 for a parent in the trash', async () => {
      const parent = await createTask(project);
      await project.api.delete(`/api/v1/tasks/${parent.id}`).expect(204);
      const res = await project.api.post('/api/v1/tasks', { title: 'T', parentId: parent.id }).expect(404);
      expect(res.body.code).toBe('not_found');
    });

    it('answers 400 nesting_too_deep when parentId names a subtask', async () => {
      const root = await createTask(project);
      const child = await createTask(project, { parentId: root.id });
      const res = await project.api.post('/api/v1/tasks', { title: 'T', parentId: child.id }).expect(400);
      expect(res.body).toMatchObject({ code: 'nesting_too_deep', errors: [{ field: 'parentId' }] });
    });

    it('checks validation before existence: a bad value with an unknown id is 400', async () => {
      const res = await project.api.post('/api/v1/tasks', { title: '', assigneeId: NO_SUCH_ID }).expect(400);
      expect(res.body.code).toBe('validation_failed');
    });

    it('answers nesting_too_deep (400) before an unknown assignee, sprint or label (404)', async () => {
      const root = await createTask(project);
      const child = await createTask(project, { parentId: root.id });
      for (const unknown of [{ assigneeId: NO_SUCH_ID }, { sprintId: NO_SUCH_ID }, { labelIds: [NO_SUCH_ID] }]) {
        const res = await project.api.post('/api/v1/tasks', { title: 'T', parentId: child.id, ...unknown });
        expect([res.status, res.body.code]).toEqual([400, 'nesting_too_deep']);
      }
    });

    it('knows ids only as issued, in lower case: the upper-case spelling names nothing (404)', async () => {
      const parent = await createTask(project);
      for (const body of [
        { assigneeId: project.members[0].membershipId.toUpperCase() },
        { labelIds: [project.labels[0].id.toUpperCase()] },
        { parentId: parent.id.toUpperCase() },
      ]) {
        const res = await project.api.post('/api/v1/tasks', { title: 'T', ...body });
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
      await project.api.get(`/api/v1/tasks/${parent.id.toUpperCase()}`).expect(404);
    });
  });

  describe('GET /api/v1/tasks/{taskId}', () => {
    it('answers the task in full, with its dependencies in both directions', async () => {
      const blocker = await createTask(project, { title: 'Blocker' });
      const task = await createTask(project, { title: 'Middle', description: 'details' });
      const waiting = await createTask(project, { title: 'Waiting' });
      await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: blocker.id }).expect(201);
      await project.api.post(`/api/v1/tasks/${waiting.id}/dependencies`, { blockedById: task.id }).expect(201);
      const res = await project.api.get(`/api/v1/tasks/${task.id}`).expect(200);
      expect(Object.keys(res.body)).toEqual(['task']);
      expect(Object.keys(res.body.task).sort()).toEqual(DETAIL_KEYS);
      expect(res.body.task).toMatchObject({
        description: 'details',
        blocked: true,
        dependencies: {
          blockedBy: [{ id: blocker.id, title: 'Blocker', status: 'backlog' }],
          blocks: [{ id: waiting.id, title: 'Waiting', status: 'backlog' }],
        },
      });
    });

    it('answers 404 for a task in the trash, of another project, unknown, or not an id', async () => {
      const trashed = await createTask(project);
      await project.api.delete(`/api/v1/tasks/${trashed.id}`).expect(204);
      const theirs = await createTask(other);
      for (const id of [trashed.id, theirs.id, NO_SUCH_ID, 'not-an-id']) {
        const res = await project.api.get(`/api/v1/tasks/${id}`);
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
    });
  });

  describe('PATCH /api/v1/tasks/{taskId}', () => {
    it('changes only the fields sent and answers the task in full', async () => {
      const task = await createTask(project, { title: 'Before', description: 'keep me', priority: 'low' });
      const res = await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'After' }).expect(200);
      expect(Object.keys(res.body.task).sort()).toEqual(DETAIL_KEYS);
      expect(res.body.task).toMatchObject({ title: 'After', description: 'keep me', priority: 'low' });
      expect(res.body.task.updatedAt > task.updatedAt).toBe(true);
    });

    it('clears description, assignee, sprint and due date with an explicit null', async () => {
      const sprint = (await project.api.post('/api/v1/sprints', { name: 'S' })).body.sprint;
      const task = await createTask(project, {
        description: 'd',
        assigneeId: project.members[0].membershipId,
        dueDate: '2027-01-01',
        ...(sprint ? { sprintId: sprint.id } : {}),
      });
      const res = await project.api
        .patch(`/api/v1/tasks/${task.id}`, { description: null, assigneeId: null, sprintId: null, dueDate: null })
        .expect(200);
      expect(res.body.task).toMatchObject({ description: null, assignee: null, sprint: null, dueDate: null });
    });

    it('rejects null for title, status, priority and labelIds', async () => {
      const task = await createTask(project);
      for (const field of ['title', 'status', 'priority', 'labelIds']) {
        const res = await project.api.patch(`/api/v1/tasks/${task.id}`, { [field]: null });
        expect([res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', field]);
      }
    });

    it('answers 400 empty_body to an empty body', async () => {
      const task = await createTask(project);
      const res = await project.api.patch(`/api/v1/tasks/${task.id}`, {}).expect(400);
      expect(res.body.code).toBe('empty_body');
      const none = await project.api.patch(`/api/v1/tasks/${task.id}`).expect(400);
      expect(none.body.code).toBe('empty_body');
    });

    it('answers 400 read_only_field to parentId, and changes nothing', async () => {
      const root = await createTask(project);
      const task = await createTask(project, { title: 'Unchanged' });
      const res = await project.api.patch(`/api/v1/tasks/${task.id}`, { parentId: root.id, title: 'Changed' }).expect(400);
      expect(res.body).toMatchObject({ code: 'read_only_field', errors: [{ field: 'parentId' }] });
      expect((await project.api.get(`/api/v1/tasks/${task.id}`)).body.task).toMatchObject({ parentId: null, title: 'Unchanged' });
    });

    it('answers 400 unknown_field to a field the task does not have', async () => {
      const task = await createTask(project);
      const res = await project.api.patch(`/api/v1/tasks/${task.id}`, { color: 'red' }).expect(400);
      expect(res.body).toMatchObject({ code: 'unknown_field', errors: [{ field: 'color' }] });
    });

    it('replaces the whole set of labels with labelIds', async () => {
      const [bug, feature, docs] = project.labels;
      const task = await createTask(project, { labelIds: [bug.id, feature.id] });
      const overlapping = await project.api.patch(`/api/v1/tasks/${task.id}`, { labelIds: [feature.id, docs.id] }).expect(200);
      expect(overlapping.body.task.labels).toHaveLength(2);
      expect(overlapping.body.task.labels).toEqual(expect.arrayContaining([feature, docs]));
      const res = await project.api.patch(`/api/v1/tasks/${task.id}`, { labelIds: [docs.id, docs.id] }).expect(200);
      expect(res.body.task.labels).toEqual([docs]);
      const cleared = await project.api.patch(`/api/v1/tasks/${task.id}`, { labelIds: [] }).expect(200);
      expect(cleared.body.task.labels).toEqual([]);
    });

    it('sets completedAt on entering done, keeps it on done to done, clears it on leaving done', async () => {
      const task = await createTask(project, { status: 'in_progress' });
      const done = (await project.api.patch(`/api/v1/tasks/${task.id}`, { status: 'done' }).expect(200)).body.task;
      expect(done.completedAt).toMatch(ISO_TIMESTAMP);
      const again = (await project.api.patch(`/api/v1/tasks/${task.id}`, { status: 'done', title: 'Renamed' }).expect(200)).body.task;
      expect(again.completedAt).toBe(done.completedAt);
      const reopened = (await project.api.patch(`/api/v1/tasks/${task.id}`, { status: 'todo' }).expect(200)).body.task;
      expect(reopened.completedAt).toBeNull();
    });

    it('lets any status move to any other status', async () => {
      const statuses = ['backlog', 'planning', 'todo', 'in_progress', 'in_review', 'done', 'cancelled'];
      const task = await createTask(project);
      let current = 'backlog';
      for (const from of statuses) {
        for (const to of statuses) {
          if (from === to) continue;
          if (current !== from) await project.api.patch(`/api/v1/tasks/${task.id}`, { status: from }).expect(200);
          const res = await project.api.patch(`/api/v1/tasks/${task.id}`, { status: to }).expect(200);
          expect(res.body.task.status).toBe(to);
          expect(res.body.task.completedAt === null).toBe(to !== 'done');
          current = to;
        }
      }
    });

    it('treats a PATCH with the current values as a success that records nothing and keeps updatedAt', async () => {
      const [bug, feature] = project.labels;
      const task = await createTask(project, { title: 'Same', priority: 'high', labelIds: [bug.id, feature.id], dueDate: '2027-03-01' });
      const before = await historyOf(task.id);
      const res = await project.api
        .patch(`/api/v1/tasks/${task.id}`, {
          title: 'Same',
          priority: 'high',
          labelIds: [feature.id, bug.id],
          dueDate: '2027-03-01',
          description: null,
        })
        .expect(200);
      expect(res.body.task.updatedAt).toBe(task.updatedAt);
      expect(await historyOf(task.id)).toEqual(before);
    });

    it('records one updated entry per real change, with each field from and to in API names', async () => {
      const task = await createTask(project, { title: 'Old', priority: 'low' });
      const member = project.members[0].membershipId;
      await project.api
        .patch(`/api/v1/tasks/${task.id}`, {
          title: 'New',
          priority: 'low',
          assigneeId: member,
          labelIds: [project.labels[0].id],
          dueDate: '2027-05-05',
        })
        .expect(200);
      const entries = await historyOf(task.id);
      expect(entries).toHaveLength(2);
      expect(entries[1]).toMatchObject({ action: 'updated', actor: 'Test key (API)' });
      // In the order of the task's fields (src/tasks/task-fields.ts), the label set last.
      expect(entries[1].changes).toEqual([
        { field: 'title', from: 'Old', to: 'New' },
        { field: 'assigneeId', from: null, to: member },
        { field: 'dueDate', from: null, to: '2027-05-05' },
        { field: 'labelIds', from: [], to: [project.labels[0].id] },
      ]);
    });

    it('attributes history to the name of the key that made the change', async () => {
      const editor = await project.issueKey(['tasks:edit'], 'Nightly sync');
      const task = await createTask(project);
      await editor.api.patch(`/api/v1/tasks/${task.id}`, { priority: 'medium' }).expect(200);
      const entries = await historyOf(task.id);
      expect(entries[entries.length - 1].actor).toBe('Nightly sync (API)');
    });

    it('answers 404, changing nothing, when a referenced id belongs to another project', async () => {
      const task = await createTask(project, { title: 'Stays' });
      for (const body of [{ assigneeId: other.members[0].membershipId }, { labelIds: [other.labels[0].id] }, { sprintId: NO_SUCH_ID }]) {
        const res = await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'Moved', ...body });
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
      expect((await project.api.get(`/api/v1/tasks/${task.id}`)).body.task.title).toBe('Stays');
    });

    it('answers 404 for a task in the trash or of another project', async () => {
      const trashed = await createTask(project);
      await project.api.delete(`/api/v1/tasks/${trashed.id}`).expect(204);
      const theirs = await createTask(other);
      for (const id of [trashed.id, theirs.id, 'nope']) {
        const res = await project.api.patch(`/api/v1/tasks/${id}`, { title: 'X' });
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
      expect((await other.api.get(`/api/v1/tasks/${theirs.id}`)).body.task.title).toBe('A task');
    });

    it('keeps both of two concurrent updates of one task in its history', async () => {
      const task = await createTask(project, { title: 'Contended' });
      await Promise.all([
        project.api.patch(`/api/v1/tasks/${task.id}`, { priority: 'urgent' }).expect(200),
        project.api.patch(`/api/v1/tasks/${task.id}`, { status: 'todo' }).expect(200),
      ]);
      const updates = (await historyOf(task.id)).filter((entry) => entry.action === 'updated');
      expect(updates.map((entry) => (entry.changes as { field: string }[])[0].field).sort()).toEqual(['priority', 'status']);
      const final = (await project.api.get(`/api/v1/tasks/${task.id}`)).body.task;
      expect(final).toMatchObject({ priority: 'urgent', status: 'todo' });
    });
  });

  describe('DELETE /api/v1/tasks/{taskId}', () => {
    it('sends the task and its subtasks to the trash: 204, gone from the list and the detail, rows kept', async () => {
      const root = await createTask(project, { title: 'Root to trash' });
      const children = [await createTask(project, { parentId: root.id }), await createTask(project, { parentId: root.id })];
      const res = await project.api.delete(`/api/v1/tasks/${root.id}`).expect(204);
      expect(res.text).toBe('');
      for (const id of [root.id, ...children.map((child) => child.id)]) {
        await project.api.get(`/api/v1/tasks/${id}`).expect(404);
        const row = await t.prisma.task.findUniqueOrThrow({ where: { id } });
        expect(row.deletedAt).toBeInstanceOf(Date);
        expect(row.trashedWithId).toBe(root.id);
      }
      const listed = (await project.api.get('/api/v1/tasks?limit=100')).body.tasks.map((task: { id: string }) => task.id);
      expect(listed).not.toContain(root.id);
      expect(listed).not.toContain(children[0].id);
    });

    it('keeps the history and adds a deleted entry to each trashed task', async () => {
      const root = await createTask(project);
      const child = await createTask(project, { parentId: root.id });
      await project.api.delete(`/api/v1/tasks/${root.id}`).expect(204);
      for (const id of [root.id, child.id]) {
        expect((await historyOf(id)).map((entry) => entry.action)).toEqual(['created', 'deleted']);
      }
    });

    it('trashes only the subtask when a subtask is deleted', async () => {
      const root = await createTask(project);
      const [first, second] = [await createTask(project, { parentId: root.id }), await createTask(project, { parentId: root.id })];
      await project.api.delete(`/api/v1/tasks/${first.id}`).expect(204);
      await project.api.get(`/api/v1/tasks/${root.id}`).expect(200);
      await project.api.get(`/api/v1/tasks/${second.id}`).expect(200);
      await project.api.get(`/api/v1/tasks/${first.id}`).expect(404);
    });

    it("answers 404 to a second DELETE, and for another project's task", async () => {
      const task = await createTask(project);
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      const again = await project.api.delete(`/api/v1/tasks/${task.id}`).expect(404);
      expect(again.body.code).toBe('not_found');
      const theirs = await createTask(other);
      await project.api.delete(`/api/v1/tasks/${theirs.id}`).expect(404);
      await other.api.get(`/api/v1/tasks/${theirs.id}`).expect(200);
    });

    it('takes a trashed blocker out of dependencies and blocked', async () => {
      const blocker = await createTask(project);
      const task = await createTask(project);
      await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: blocker.id }).expect(201);
      await project.api.delete(`/api/v1/tasks/${blocker.id}`).expect(204);
      const res = await project.api.get(`/api/v1/tasks/${task.id}`).expect(200);
      expect(res.body.task).toMatchObject({ blocked: false, dependencies: { blockedBy: [], blocks: [] } });
    });
  });

  describe('GET /api/v1/members and /api/v1/labels', () => {
    it("lists the members and labels of the key's project only", async () => {
      const members = (await project.api.get('/api/v1/members').expect(200)).body;
      expect(members).toEqual({ members: project.members });
      const labels = (await project.api.get('/api/v1/labels').expect(200)).body;
      expect(labels).toEqual({ labels: [...project.labels].sort((a, b) => a.name.localeCompare(b.name)) });
    });
  });
});
