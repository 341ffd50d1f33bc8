import { asAdmin, createProject, createTask, ISO_TIMESTAMP, NO_SUCH_ID, TaskJson, TestProject, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

describe('trash', () => {
  const t = useTestApp();
  const project = useProject(t);

  const trash = (p: TestProject, id: string) => p.api.delete(`/api/v1/tasks/${id}`).expect(204);
  const restore = (p: TestProject, id: string) => p.api.post(`/api/v1/trash/${id}/restore`);

  describe('GET /api/v1/trash', () => {
    it('lists trashed tasks, most recently deleted first, with deletedAt and without description', async () => {
      const own = await createProject(t, 'Trash list');
      const [a, b, c] = [
        await createTask(own, { title: 'A', description: 'd' }),
        await createTask(own, { title: 'B' }),
        await createTask(own, { title: 'C' }),
      ];
      await trash(own, b.id);
      await trash(own, a.id);
      await trash(own, c.id);
      const res = await own.api.get('/api/v1/trash').expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['nextCursor', 'tasks', 'total']);
      expect(res.body.tasks.map((task: TaskJson) => task.id)).toEqual([c.id, a.id, b.id]);
      expect(res.body).toMatchObject({ total: 3, nextCursor: null });
      for (const task of res.body.tasks) {
        expect(task.deletedAt).toMatch(ISO_TIMESTAMP);
        expect(task).not.toHaveProperty('description');
        expect(task).not.toHaveProperty('dependencies');
      }
      expect((await own.api.get('/api/v1/tasks')).body.total).toBe(0);
    });

    it('pages with a cursor of its own and refuses a task-list cursor', async () => {
      const own = await createProject(t, 'Trash pages');
      const ids = [];
      for (let i = 0; i < 5; i++) {
        const task = await createTask(own);
        await trash(own, task.id);
        ids.unshift(task.id);
      }
      const first = await own.api.get('/api/v1/trash?limit=2').expect(200);
      const second = await own.api.get(`/api/v1/trash?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`).expect(200);
      const third = await own.api.get(`/api/v1/trash?limit=2&cursor=${encodeURIComponent(second.body.nextCursor)}`).expect(200);
      expect([...first.body.tasks, ...second.body.tasks, ...third.body.tasks].map((task: TaskJson) => task.id)).toEqual(ids);
      expect(third.body.nextCursor).toBeNull();
      for (let i = 0; i < 3; i++) await createTask(own);
      const taskCursor = (await own.api.get('/api/v1/tasks?limit=1')).body.nextCursor;
      expect((await own.api.get(`/api/v1/trash?cursor=${encodeURIComponent(taskCursor)}`).expect(400)).body.code).toBe('invalid_cursor');
      // The trash page of this cursor is remembered; on the task list the cursor is still refused.
      expect((await own.api.get(`/api/v1/tasks?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`).expect(400)).body.code).toBe(
        'invalid_cursor',
      );
      expect((await own.api.get('/api/v1/trash?status=done').expect(400)).body.code).toBe('unknown_field');
    });
  });

  describe('POST /api/v1/trash/{taskId}/restore', () => {
    it('brings the task back with the subtasks trashed with it, not one trashed before', async () => {
      const root = await createTask(project, { title: 'Root' });
      const [kept, earlier] = [await createTask(project, { parentId: root.id }), await createTask(project, { parentId: root.id })];
      await trash(project, earlier.id);
      await trash(project, root.id);
      const res = await restore(project, root.id).expect(200);
      expect(res.body.task).toMatchObject({ id: root.id, title: 'Root' });
      expect(res.body.task).toHaveProperty('dependencies');
      await project.api.get(`/api/v1/tasks/${root.id}`).expect(200);
      await project.api.get(`/api/v1/tasks/${kept.id}`).expect(200);
      await project.api.get(`/api/v1/tasks/${earlier.id}`).expect(404);
      const listed = (await project.api.get('/api/v1/trash?limit=100')).body.tasks.map((task: TaskJson) => task.id);
      expect(listed).toContain(earlier.id);
      expect(listed).not.toContain(root.id);
    });

    it('answers 409 for a subtask whose parent is still in the trash', async () => {
      const root = await createTask(project);
      const child = await createTask(project, { parentId: root.id });
      await trash(project, root.id);
      const res = await restore(project, child.id).expect(409);
      expect(res.body.code).toBe('conflict');
      await project.api.get(`/api/v1/tasks/${child.id}`).expect(404);
    });

    it('restores labels, assignee and dependencies as they were', async () => {
      const blocker = await createTask(project, { title: 'Blocker' });
      const task = await createTask(project, { labelIds: [project.labels[1].id], assigneeId: project.members[0].membershipId });
      const waiting = await createTask(project, { title: 'Waiting' });
      await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: blocker.id }).expect(201);
      await project.api.post(`/api/v1/tasks/${waiting.id}/dependencies`, { blockedById: task.id }).expect(201);
      await trash(project, task.id);
      expect((await project.api.get(`/api/v1/tasks/${waiting.id}`)).body.task).toMatchObject({ blocked: false, dependencies: { blockedBy: [] } });
      const restored = (await restore(project, task.id).expect(200)).body.task;
      expect(restored).toMatchObject({
        labels: [project.labels[1]],
        assignee: project.members[0],
        blocked: true,
        dependencies: { blockedBy: [{ id: blocker.id }], blocks: [{ id: waiting.id }] },
      });
      expect((await project.api.get(`/api/v1/tasks/${waiting.id}`)).body.task.blocked).toBe(true);
    });

    it('brings a task back without its sprint when that sprint was closed or deleted meanwhile', async () => {
      const own = await createProject(t, 'Sprint gone');
      const admin = asAdmin(t);
      const closing = (await own.api.post('/api/v1/sprints', { name: 'Closing' })).body.sprint;
      const deleting = (await own.api.post('/api/v1/sprints', { name: 'Deleting' })).body.sprint;
      const staying = (await own.api.post('/api/v1/sprints', { name: 'Staying' })).body.sprint;
      const [a, b, c] = [
        await createTask(own, { sprintId: closing.id }),
        await createTask(own, { sprintId: deleting.id }),
        await createTask(own, { sprintId: staying.id }),
      ];
      for (const task of [a, b, c]) await trash(own, task.id);
      await admin.post(`/admin/v1/sprints/${closing.id}/activate`).expect(200);
      await admin.post(`/admin/v1/sprints/${closing.id}/close`).expect(200);
      await own.api.delete(`/api/v1/sprints/${deleting.id}`).expect(204);
      expect((await restore(own, a.id).expect(200)).body.task.sprint).toBeNull();
      expect((await restore(own, b.id).expect(200)).body.task.sprint).toBeNull();
      expect((await restore(own, c.id).expect(200)).body.task.sprint).toMatchObject({ id: staying.id });
      const [restoredEntry] = (await own.api.get(`/api/v1/tasks/${a.id}/history`)).body.history;
      expect(restoredEntry).toMatchObject({ action: 'restored', changes: [{ field: 'sprintId', from: closing.id, to: null }] });
    });

    it('records deleted and restored in history', async () => {
      const task = await createTask(project);
      await trash(project, task.id);
      await restore(project, task.id).expect(200);
      const actions = (await project.api.get(`/api/v1/tasks/${task.id}/history`)).body.history.map((entry: { action: string }) => entry.action);
      expect(actions).toEqual(['restored', 'deleted', 'created']);
    });

    it("answers 404 for a live task, another project's trashed task, or an unknown id", async () => {
      const live = await createTask(project);
      const other = await createProject(t, 'Other');
      const theirs = await createTask(other);
      await trash(other, theirs.id);
      for (const id of [live.id, theirs.id, NO_SUCH_ID, 'x']) {
        const res = await restore(project, id);
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
      await other.api.get(`/api/v1/tasks/${theirs.id}`).expect(404);
    });

    it('needs the tasks:delete permission', async () => {
      const task = await createTask(project);
      await trash(project, task.id);
      const editor = await project.issueKey(['tasks:create', 'tasks:edit', 'sprints:manage'], 'No delete');
      const res = await editor.api.post(`/api/v1/trash/${task.id}/restore`).expect(403);
      expect(res.body).toMatchObject({ code: 'insufficient_permission', requiredPermission: 'tasks:delete' });
      await editor.api.delete(`/api/v1/trash/${task.id}`).expect(403);
      await project.api.get(`/api/v1/tasks/${task.id}`).expect(404);
    });
  });

  describe('DELETE /api/v1/trash/{taskId}', () => {
    it('destroys a trashed task with its subtasks, labels, dependencies and history, leaving no orphan rows', async () => {
      const own = await createProject(t, 'Purge');
      const outside = await createTask(own, { title: 'Outside' });
      const root = await createTask(own, { labelIds: [own.labels[0].id] });
      const children = [await createTask(own, { parentId: root.id, labelIds: [own.labels[1].id] }), await createTask(own, { parentId: root.id })];
      await own.api.post(`/api/v1/tasks/${root.id}/dependencies`, { blockedById: outside.id }).expect(201);
      await own.api.post(`/api/v1/tasks/${outside.id}/dependencies`, { blockedById: children[0].id }).expect(201);
      await trash(own, root.id);
      await restore(own, root.id).expect(200);
      await trash(own, root.id);
      await own.api.delete(`/api/v1/trash/${root.id}`).expect(204);

      const ids = [root.id, ...children.map((child) => child.id)];
      expect(await t.prisma.task.count({ where: { id: { in: ids } } })).toBe(0);
      expect(await t.prisma.taskLabel.count({ where: { taskId: { in: ids } } })).toBe(0);
      expect(await t.prisma.taskDependency.count({ where: { OR: [{ taskId: { in: ids } }, { blockedById: { in: ids } }] } })).toBe(0);
      expect(await t.prisma.historyEntry.count({ where: { taskId: { in: ids } } })).toBe(0);
      const orphans = await t.prisma.$queryRaw<{ n: number }[]>`
        SELECT (SELECT count(*) FROM task_labels tl WHERE NOT EXISTS (SELECT 1 FROM tasks x WHERE x.id = tl.task_id))
             + (SELECT count(*) FROM task_dependencies d WHERE NOT EXISTS (SELECT 1 FROM tasks x WHERE x.id = d.task_id)
                                                            OR NOT EXISTS (SELECT 1 FROM tasks x WHERE x.id = d.blocked_by_id))
             + (SELECT count(*) FROM history_entries h WHERE NOT EXISTS (SELECT 1 FROM tasks x WHERE x.id = h.task_id))
             + (SELECT count(*) FROM tasks c WHERE c.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tasks x WHERE x.id = c.parent_id)) AS n`;
      expect(Number(orphans[0].n)).toBe(0);
      const survivor = (await own.api.get(`/api/v1/tasks/${outside.id}`).expect(200)).body.task;
      expect(survivor).toMatchObject({ blocked: false, dependencies: { blockedBy: [], blocks: [] } });
      expect((await own.api.get('/api/v1/trash')).body.total).toBe(0);
    });

    it("answers 404 for a live task, a second purge, and another project's task", async () => {
      const live = await createTask(project);
      expect((await project.api.delete(`/api/v1/trash/${live.id}`).expect(404)).body.code).toBe('not_found');
      await project.api.get(`/api/v1/tasks/${live.id}`).expect(200);
      const task = await createTask(project);
      await trash(project, task.id);
      await project.api.delete(`/api/v1/trash/${task.id}`).expect(204);
      await project.api.delete(`/api/v1/trash/${task.id}`).expect(404);
      const other = await createProject(t, 'Other');
      const theirs = await createTask(other);
      await trash(other, theirs.id);
      await project.api.delete(`/api/v1/trash/${theirs.id}`).expect(404);
      expect(await t.prisma.task.count({ where: { id: theirs.id } })).toBe(1);
    });
  });
});
