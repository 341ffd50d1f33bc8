import { asAdmin, createProject, createTask, ISO_TIMESTAMP, TestProject, withKey } from './support/fixtures';
import { engine, startTestApp, useTestApp } from './support/test-app';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type EventJson = { id: string; sequence: number; type: string; occurredAt: string; actor: string; data: Record<string, any> };

/** The events of createProject's set-up: 2 member.created, then 3 label.created. */
const S = 5;

describe('events and the change feed', () => {
  const t = useTestApp();

  /** Every event of the project after `after`, through the feed. */
  async function eventsAfter(project: TestProject, after = 0): Promise<EventJson[]> {
    const res = await project.api.get(`/api/v1/events?after=${after}&limit=1000`).expect(200);
    return res.body.events;
  }

  describe('what each change emits', () => {
    it('a create emits task.created with the task as GET answers it, numbered on from the set-up, attributed to the key', async () => {
      const project = await createProject(t, 'Events create');
      const task = await createTask(project, { title: 'First', labelIds: [project.labels[0].id] });
      const events = await eventsAfter(project, S);
      expect(events).toHaveLength(1);
      const [event] = events;
      expect(Object.keys(event).sort()).toEqual(['actor', 'data', 'id', 'occurredAt', 'sequence', 'type']);
      expect(event).toMatchObject({ sequence: S + 1, type: 'task.created', actor: 'Test key (API)' });
      expect(event.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(event.occurredAt).toMatch(ISO_TIMESTAMP);
      const detail = (await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task;
      expect(event.data).toEqual({ task: detail });
    });

    it('a PATCH emits task.updated with the changes as history has them; a PATCH that changes nothing emits nothing', async () => {
      const project = await createProject(t, 'Events update');
      const task = await createTask(project, { title: 'Before' });
      await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'After', priority: 'high' }).expect(200);
      await project.api.patch(`/api/v1/tasks/${task.id}`, { title: 'After', priority: 'high' }).expect(200);
      const events = await eventsAfter(project, S + 1);
      expect(events.map((event) => event.type)).toEqual(['task.updated']);
      const history = (await project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200)).body.history;
      expect(events[0].data.changes).toEqual(history[0].changes);
      expect(events[0].data.changes).toEqual([
        { field: 'title', from: 'Before', to: 'After' },
        { field: 'priority', from: 'none', to: 'high' },
      ]);
      expect(events[0].data.task).toEqual((await project.api.get(`/api/v1/tasks/${task.id}`)).body.task);
    });

    it('trashing a task with 2 subtasks emits 3 task.deleted, each as the trash lists it; restoring emits task.restored', async () => {
      const project = await createProject(t, 'Events trash');
      const parent = await createTask(project, { title: 'Parent' });
      const subtasks = [await createTask(project, { parentId: parent.id }), await createTask(project, { parentId: parent.id })];
      await project.api.delete(`/api/v1/tasks/${parent.id}`).expect(204);
      const deleted = await eventsAfter(project, S + 3);
      expect(deleted.map((event) => event.type)).toEqual(['task.deleted', 'task.deleted', 'task.deleted']);
      expect(deleted.map((event) => event.sequence)).toEqual([S + 4, S + 5, S + 6]);
      expect(deleted.map((event) => event.data.task.id).sort()).toEqual([parent.id, ...subtasks.map((task) => task.id)].sort());
      const trash = (await project.api.get('/api/v1/trash').expect(200)).body.tasks;
      for (const event of deleted) expect(event.data).toEqual({ task: trash.find((task: { id: string }) => task.id === event.data.task.id) });

      await project.api.post(`/api/v1/trash/${parent.id}/restore`).expect(200);
      const restored = await eventsAfter(project, S + 6);
      expect(restored.map((event) => event.type)).toEqual(['task.restored', 'task.restored', 'task.restored']);
      const parentEvent = restored.find((event) => event.data.task.id === parent.id)!;
      expect(parentEvent.data).toEqual({ task: (await project.api.get(`/api/v1/tasks/${parent.id}`)).body.task });
    });

    it('purging emits task.purged with the id alone, for the task and each subtask destroyed with it', async () => {
      const project = await createProject(t, 'Events purge');
      const parent = await createTask(project);
      const subtask = await createTask(project, { parentId: parent.id });
      await project.api.delete(`/api/v1/tasks/${parent.id}`).expect(204);
      await project.api.delete(`/api/v1/trash/${parent.id}`).expect(204);
      const purged = await eventsAfter(project, S + 4);
      expect(purged.map((event) => [event.type, event.data])).toEqual([
        ['task.purged', { task: { id: parent.id } }],
        ['task.purged', { task: { id: subtask.id } }],
      ]);
    });

    it('a dependency added or removed emits one event on the task of the path, naming the other task', async () => {
      const project = await createProject(t, 'Events dependencies');
      const blocked = await createTask(project, { title: 'Blocked' });
      const blocker = await createTask(project, { title: 'Blocker' });
      await project.api.post(`/api/v1/tasks/${blocked.id}/dependencies`, { blockedById: blocker.id }).expect(201);
      await project.api.delete(`/api/v1/tasks/${blocked.id}/dependencies/${blocker.id}`).expect(204);
      const events = await eventsAfter(project, S + 2);
      expect(events.map((event) => [event.type, event.data.task.id, event.data.blockedById])).toEqual([
        ['task.dependency_added', blocked.id, blocker.id],
        ['task.dependency_removed', blocked.id, blocker.id],
      ]);
      expect(events[0].data.task.dependencies.blockedBy.map((ref: { id: string }) => ref.id)).toEqual([blocker.id]);
      expect(events[1].data.task.dependencies.blockedBy).toEqual([]);
    });

    it('sprint changes emit sprint events; closing and deleting a sprint also emit task.updated for each task moved', async () => {
      const project = await createProject(t, 'Events sprints');
      const admin = asAdmin(t);
      const sprint = (await project.api.post('/api/v1/sprints', { name: 'S1' }).expect(201)).body.sprint;
      const next = (await project.api.post('/api/v1/sprints', { name: 'S2' }).expect(201)).body.sprint;
      await project.api.patch(`/api/v1/sprints/${sprint.id}`, { goal: 'Ship' }).expect(200);
      await project.api.patch(`/api/v1/sprints/${sprint.id}`, { goal: 'Ship' }).expect(200);
      const open = await createTask(project, { sprintId: sprint.id });
      await createTask(project, { sprintId: sprint.id, status: 'done' });
      await admin.post(`/admin/v1/sprints/${sprint.id}/activate`).expect(200);
      await admin.post(`/admin/v1/sprints/${sprint.id}/close`, { moveOpenTasksTo: next.id }).expect(200);
      await project.api.delete(`/api/v1/sprints/${next.id}`).expect(204);

      const events = await eventsAfter(project, S);
      expect(events.map((event) => event.type)).toEqual([
        'sprint.created',
        'sprint.created',
        'sprint.updated',
        'task.created',
        'task.created',
        'sprint.activated',
        'task.updated',
        'sprint.closed',
        'task.updated',
        'sprint.deleted',
      ]);
      expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => S + n));
      expect(events[0].data).toEqual({ sprint: { ...sprint } });
      expect(events[2].data.changes).toEqual([{ field: 'goal', from: null, to: 'Ship' }]);
      expect(events[5]).toMatchObject({ actor: 'App', data: { sprint: { id: sprint.id, status: 'active' } } });
      expect(events[6]).toMatchObject({
        actor: 'App',
        data: { changes: [{ field: 'sprintId', from: sprint.id, to: next.id }], task: { id: open.id } },
      });
      // sprint.closed carries the report frozen at the close (decisions.md section 19).
      expect(events[7].data).toEqual({
        sprint: (await project.api.get(`/api/v1/sprints/${sprint.id}`)).body.sprint,
        report: (await project.api.get(`/api/v1/sprints/${sprint.id}/report`)).body.report,
      });
      expect(events[8]).toMatchObject({ actor: 'Test key (API)', data: { changes: [{ field: 'sprintId', from: next.id, to: null }] } });
      expect(events[9].data).toEqual({ sprint: { id: next.id } });
    });

    it('the app side emits member.* and label.* events with the member or label as the lists show it, by the App; a PATCH that changes nothing emits nothing', async () => {
      const project = await createProject(t, 'Events labels and members');
      const admin = asAdmin(t);
      const setUp = await eventsAfter(project);
      expect(setUp.map((event) => [event.sequence, event.type, event.actor])).toEqual([
        [1, 'member.created', 'App'],
        [2, 'member.created', 'App'],
        [3, 'label.created', 'App'],
        [4, 'label.created', 'App'],
        [5, 'label.created', 'App'],
      ]);
      expect(setUp[0].data).toEqual({ member: project.members[0] });
      expect(setUp[2].data).toEqual({ label: project.labels[0] });

      const [ada] = project.members;
      const [bug] = project.labels;
      await admin.patch(`/admin/v1/members/${ada.membershipId}`, { name: 'Ada Lovelace' }).expect(200);
      await admin.patch(`/admin/v1/members/${ada.membershipId}`, { name: 'Ada Lovelace' }).expect(200);
      await admin.patch(`/admin/v1/labels/${bug.id}`, { name: 'defect', color: '#FF0000' }).expect(200);
      await admin.patch(`/admin/v1/labels/${bug.id}`, { color: '#ff0000' }).expect(200);
      const events = await eventsAfter(project, S);
      expect(events.map((event) => [event.type, event.actor])).toEqual([
        ['member.updated', 'App'],
        ['label.updated', 'App'],
      ]);
      const members = (await project.api.get('/api/v1/members').expect(200)).body.members;
      const labels = (await project.api.get('/api/v1/labels').expect(200)).body.labels;
      expect(events[0].data).toEqual({
        member: members.find((member: { membershipId: string }) => member.membershipId === ada.membershipId),
        changes: [{ field: 'name', from: 'Ada', to: 'Ada Lovelace' }],
      });
      expect(events[1].data).toEqual({
        label: { id: bug.id, name: 'defect', color: '#ff0000' },
        changes: [
          { field: 'name', from: 'bug', to: 'defect' },
          { field: 'color', from: '#d73a4a', to: '#ff0000' },
        ],
      });
      expect(labels).toContainEqual(events[1].data.label);
    });

    it('filters the feed by the label and member event types', async () => {
      const project = await createProject(t, 'Events label filter');
      const res = await project.api.get('/api/v1/events?types=label.created').expect(200);
      expect(res.body.events.map((event: EventJson) => event.data.label)).toEqual(project.labels);
    });

    it('purging a task removes its dependency links with task.purged alone: no task.dependency_removed for them', async () => {
      const project = await createProject(t, 'Events purge links');
      const doomed = await createTask(project, { title: 'Doomed' });
      const blocker = await createTask(project, { title: 'Blocks the doomed one' });
      const waiting = await createTask(project, { title: 'Waits for the doomed one' });
      await project.api.post(`/api/v1/tasks/${doomed.id}/dependencies`, { blockedById: blocker.id }).expect(201);
      await project.api.post(`/api/v1/tasks/${waiting.id}/dependencies`, { blockedById: doomed.id }).expect(201);
      await project.api.delete(`/api/v1/tasks/${doomed.id}`).expect(204);
      await project.api.delete(`/api/v1/trash/${doomed.id}`).expect(204);
      const events = await eventsAfter(project, S + 6);
      expect(events.map((event) => [event.type, event.data])).toEqual([['task.purged', { task: { id: doomed.id } }]]);
      for (const task of [blocker, waiting]) {
        expect((await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task.dependencies).toEqual({ blockedBy: [], blocks: [] });
      }
    });

    it('keeps each project to its own feed and numbering', async () => {
      const one = await createProject(t, 'Events one');
      const other = await createProject(t, 'Events other');
      await createTask(one);
      await createTask(other);
      await createTask(other);
      expect((await eventsAfter(one, S)).map((event) => event.sequence)).toEqual([S + 1]);
      expect((await eventsAfter(other, S)).map((event) => event.sequence)).toEqual([S + 1, S + 2]);
    });
  });

  describe('GET /api/v1/events', () => {
    let project: TestProject;
    beforeAll(async () => {
      project = await createProject(t, 'Feed paging');
      for (let i = 0; i < 5; i++) await createTask(project, { title: `T${i}` });
      const first = await createTask(project, { title: 'Patched' });
      await project.api.patch(`/api/v1/tasks/${first.id}`, { status: 'done' }).expect(200);
    });

    it('pages oldest first with after and limit, nextAfter and hasMore', async () => {
      const page = await project.api.get(`/api/v1/events?after=${S}&limit=4`).expect(200);
      expect(page.body.events.map((event: EventJson) => event.sequence)).toEqual([S + 1, S + 2, S + 3, S + 4]);
      expect(page.body).toMatchObject({ nextAfter: S + 4, hasMore: true });
      const rest = await project.api.get(`/api/v1/events?after=${page.body.nextAfter}&limit=4`).expect(200);
      expect(rest.body.events.map((event: EventJson) => event.sequence)).toEqual([S + 5, S + 6, S + 7]);
      expect(rest.body).toMatchObject({ nextAfter: S + 7, hasMore: false });
      const none = await project.api.get(`/api/v1/events?after=${S + 7}`).expect(200);
      expect(none.body).toEqual({ events: [], nextAfter: S + 7, hasMore: false });
    });

    it('filters by types', async () => {
      const res = await project.api.get('/api/v1/events?types=task.updated,sprint.closed').expect(200);
      expect(res.body.events.map((event: EventJson) => [event.sequence, event.type])).toEqual([[S + 7, 'task.updated']]);
      expect(res.body.nextAfter).toBe(S + 7);
    });

    it.each([
      ['after=-1', 'after'],
      ['after=1.5', 'after'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['types=task.exploded', 'types'],
      ['types=', 'types'],
      ['wait=0', 'wait'],
      ['wait=31', 'wait'],
    ])('refuses %s with 400 naming the parameter', async (query, field) => {
      const res = await project.api.get(`/api/v1/events?${query}`).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field }] });
    });

    it('refuses an after beyond the last sequence with 400 naming after, with lastSequence, also when waiting', async () => {
      for (const query of [`after=${S + 8}`, `after=${S + 8}&wait=1`, 'after=9007199254740991']) {
        const res = await project.api.get(`/api/v1/events?${query}`).expect(400);
        expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'after' }], lastSequence: S + 7 });
      }
      const fresh = await asAdmin(t).post('/admin/v1/projects', { name: 'No events yet' }).expect(201);
      const key = await asAdmin(t).post(`/admin/v1/projects/${fresh.body.project.id}/keys`, { name: 'Reader', permissions: [] }).expect(201);
      const empty = withKey(t, key.body.secret);
      expect((await empty.get('/api/v1/events?after=0').expect(200)).body).toEqual({ events: [], nextAfter: 0, hasMore: false });
      expect((await empty.get('/api/v1/events?after=1').expect(400)).body).toMatchObject({ errors: [{ field: 'after' }], lastSequence: 0 });
    });

    it('refuses an unknown parameter', async () => {
      expect((await project.api.get('/api/v1/events?since=1').expect(400)).body.code).toBe('unknown_field');
    });
  });

  describe('long poll', () => {
    it('holds a wait request until an event commits, and answers within 500 ms of it', async () => {
      const project = await createProject(t, 'Long poll');
      const started = Date.now();
      const held = project.api.get(`/api/v1/events?after=${S}&wait=10`).then((res) => ({ res, at: Date.now() }));
      await new Promise((resolve) => setTimeout(resolve, 700));
      const task = await createTask(project, { title: 'Wakes the poll' });
      const committed = Date.now();
      const { res, at } = await held;
      expect(res.status).toBe(200);
      expect(res.body.events.map((event: EventJson) => event.data.task.id)).toEqual([task.id]);
      expect(at - started).toBeGreaterThanOrEqual(700);
      expect(at - committed).toBeLessThan(500);
    });

    it('answers at once when an event already matches, and keeps waiting through events of other types', async () => {
      const project = await createProject(t, 'Long poll types');
      await createTask(project);
      const quick = Date.now();
      await project.api.get('/api/v1/events?wait=10').expect(200);
      expect(Date.now() - quick).toBeLessThan(1000);

      const held = project.api.get(`/api/v1/events?after=${S + 1}&wait=10&types=task.updated`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const other = await createTask(project);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await project.api.patch(`/api/v1/tasks/${other.id}`, { title: 'Now it matches' }).expect(200);
      const res = await held.expect(200);
      expect(res.body.events.map((event: EventJson) => event.type)).toEqual(['task.updated']);
    });

    it('answers an empty page when nothing happens before the wait ends', async () => {
      const project = await createProject(t, 'Long poll timeout');
      const started = Date.now();
      const res = await project.api.get(`/api/v1/events?after=${S}&wait=2`).expect(200);
      expect(res.body).toEqual({ events: [], nextAfter: S, hasMore: false });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      expect(Date.now() - started).toBeLessThan(4000);
    });

    (engine === 'postgresql' ? it : it.skip)('is woken by a change made through another instance on the same database (PostgreSQL)', async () => {
      const project = await createProject(t, 'Two instances');
      const second = await startTestApp({}, { url: t.config.databaseUrl, alter: async () => undefined, drop: async () => undefined });
      try {
        const held = project.api.get(`/api/v1/events?after=${S}&wait=10`).then((res) => ({ res, at: Date.now() }));
        await new Promise((resolve) => setTimeout(resolve, 500));
        const created = await second.http
          .post('/api/v1/tasks')
          .set('Authorization', `Bearer ${project.key}`)
          .send({ title: 'Elsewhere' })
          .expect(201);
        const committed = Date.now();
        const { res, at } = await held;
        expect(res.body.events.map((event: EventJson) => event.data.task.id)).toEqual([created.body.task.id]);
        expect(at - committed).toBeLessThan(500);
      } finally {
        await second.close();
      }
    });
  });

  describe('sequence under concurrency', () => {
    it('numbers 8 concurrent writers of one project gap-free and in commit order, as a polling reader sees them', async () => {
      const project = await createProject(t, 'Concurrent writers');
      const writers = 8;
      const changesEach = engine === 'postgresql' ? 50 : 10;
      const seen: number[] = [];
      let writing = true;
      const reader = (async () => {
        let after = S;
        while (writing || after < S + writers * changesEach) {
          const res = await project.api.get(`/api/v1/events?after=${after}&limit=1000&wait=2`).expect(200);
          for (const event of res.body.events as EventJson[]) seen.push(event.sequence);
          after = res.body.nextAfter;
        }
      })();
      await Promise.all(
        Array.from({ length: writers }, async (_, writer) => {
          const task = await createTask(project, { title: `Writer ${writer}` });
          for (let i = 1; i < changesEach; i++)
            await project.api.patch(`/api/v1/tasks/${task.id}`, { title: `Writer ${writer} change ${i}` }).expect(200);
        }),
      );
      writing = false;
      await reader;
      const total = writers * changesEach;
      expect(seen).toEqual(Array.from({ length: total }, (_, index) => S + index + 1));
    }, 180_000);

    it('shows in each event the rows as every change numbered before it left them, even when the changes ran at once', async () => {
      // Each round: tasks blocked by one blocker, then the blocker finished while every blocked
      // task is renamed, all at once. A rename numbered after the blocker's event must show the
      // task unblocked, one numbered before it blocked: an event built from a snapshot taken
      // before its numbers (while it waited for the change before) would still show it blocked.
      const project = await createProject(t, 'Events in commit order');
      const rounds = engine === 'postgresql' ? 8 : 2;
      const blockedEach = 12;
      for (let round = 0; round < rounds; round++) {
        const blocker = await createTask(project, { title: `Blocker ${round}` });
        const blocked = [];
        for (let i = 0; i < blockedEach; i++) {
          const task = await createTask(project, { title: `Blocked ${round}.${i}` });
          await project.api.post(`/api/v1/tasks/${task.id}/dependencies`, { blockedById: blocker.id }).expect(201);
          blocked.push(task);
        }
        const start = (await eventsAfter(project)).at(-1)!.sequence;
        await Promise.all([
          project.api.patch(`/api/v1/tasks/${blocker.id}`, { status: 'done' }).expect(200),
          ...blocked.map((task) => project.api.patch(`/api/v1/tasks/${task.id}`, { title: `Renamed ${task.title}` }).expect(200)),
        ]);
        const events = await eventsAfter(project, start);
        expect(events).toHaveLength(blockedEach + 1);
        const finished = events.find((event) => event.data.task.id === blocker.id)!;
        for (const event of events.filter((event) => event !== finished)) {
          expect({ sequence: event.sequence, blocked: event.data.task.blocked }).toEqual({
            sequence: event.sequence,
            blocked: event.sequence < finished.sequence,
          });
        }
      }
    }, 180_000);
  });
});
