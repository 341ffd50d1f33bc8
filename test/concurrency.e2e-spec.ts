import { isDeepStrictEqual } from 'node:util';
import { createProject, TestProject } from './support/fixtures';
import { Answer, atOnce, counter, describeRaces, inLanes, Json, lanesFor, listen, RACE_ROUNDS, raceClient, RaceClient } from './support/races';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

// decisions.md section 17: what two people acting at once may expect, checked as a team of
// users and sync jobs would meet it: requests sent at the same moment, RACE_ROUNDS rounds of
// each race, the invariants checked after every round. The lock order that makes them hold is
// docs/locking.md. Rounds run in lanes (inLanes), each lane in a project of its own.
describeRaces('two people at once (decisions.md section 17)', () => {
  let t: TestApp;
  let baseUrl: string;
  /** A project per lane (lanesFor(2) of them), with its key's client. */
  let lanes: { project: TestProject; api: RaceClient }[];
  let admin: RaceClient;
  /** Every answer of a race, to check at the end that none was a conflict or a server error. */
  const answers: { race: string; answer: Answer }[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    baseUrl = await listen(t);
    lanes = [];
    for (let lane = 0; lane < lanesFor(2); lane++) {
      const project = await createProject(t, `Races ${lane}`);
      lanes.push({ project, api: raceClient(baseUrl, project.key) });
    }
    admin = raceClient(baseUrl, ADMIN_TOKEN);
  });
  afterAll(() => t.close());

  /** Fires the requests at once and keeps their answers for the final checks. */
  async function race(name: string, ...requests: (() => Promise<Answer>)[]): Promise<Answer[]> {
    const answered = await atOnce(...requests);
    for (const answer of answered) answers.push({ race: name, answer });
    return answered;
  }

  async function create(api: RaceClient, body: object): Promise<Json> {
    const res = await api.post('/api/v1/tasks', { title: 'A task', ...body });
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.task;
  }

  /** Several tasks in one request (set-up of a round). */
  async function createEach(api: RaceClient, bodies: object[]): Promise<Json[]> {
    const res = await api.post('/api/v1/tasks/bulk', { tasks: bodies.map((body) => ({ title: 'A task', ...body })) });
    if (res.status !== 201) throw new Error(`bulk create answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.tasks;
  }

  async function sprint(api: RaceClient, name: string): Promise<Json> {
    const res = await api.post('/api/v1/sprints', { name });
    if (res.status !== 201) throw new Error(`sprint create answered ${res.status}`);
    return res.body.sprint;
  }

  /**
   * A task per round, made in bulk before the rounds, each in its round's lane's project
   * (`count` lanes): answers them by round. A round's race is then its first write to its task.
   */
  async function taskPerRound(count: number, body: (round: number) => object): Promise<Json[]> {
    const tasks: Json[] = [];
    await Promise.all(
      lanes.slice(0, count).map(async ({ api }, lane) => {
        const rounds = Array.from({ length: RACE_ROUNDS }, (_, round) => round).filter((round) => round % count === lane);
        for (let at = 0; at < rounds.length; at += 100) {
          const batch = rounds.slice(at, at + 100);
          (await createEach(api, batch.map(body))).forEach((task, i) => (tasks[batch[i]] = task));
        }
      }),
    );
    return tasks;
  }

  const live = async (api: RaceClient, taskId: string) => (await api.get(`/api/v1/tasks/${taskId}`)).status === 200;
  const exists = async (taskId: string) => (await t.prisma.task.count({ where: { id: taskId } })) > 0;

  it('never leaves a subtask live under a trashed parent: its restore and its parent’s trip to the trash at once; the purge then destroys nothing live', async () => {
    const problems: string[] = [];
    const parents = await taskPerRound(lanesFor(2), (round) => ({ title: `Parent ${round}` }));
    const subtasks = await taskPerRound(lanesFor(2), (round) => ({ title: `Subtask ${round}`, parentId: parents[round].id }));
    await inLanes(lanesFor(2), RACE_ROUNDS, async (round, lane) => {
      const { api } = lanes[lane];
      const [parent, subtask] = [parents[round], subtasks[round]];
      expect((await api.delete(`/api/v1/tasks/${subtask.id}`)).status).toBe(204);
      const [restore, trash] = await race(
        'restore a subtask, trash its parent',
        () => api.post(`/api/v1/trash/${subtask.id}/restore`),
        () => api.delete(`/api/v1/tasks/${parent.id}`),
      );
      expect([200, 409]).toContain(restore.status);
      expect(trash.status).toBe(204);
      const [parentLive, subtaskLive] = await Promise.all([live(api, parent.id), live(api, subtask.id)]);
      if (subtaskLive && !parentLive) problems.push(`round ${round}: the subtask is live, its parent in the trash`);
      const purge = await api.delete(`/api/v1/trash/${parent.id}`);
      if (purge.status === 204 && subtaskLive && !(await live(api, subtask.id))) problems.push(`round ${round}: the purge destroyed a live subtask`);
    });
    expect(problems).toEqual([]);
  });

  it('destroys only what is in the trash when the purge commits: a parent’s restore and the purge of its trashed subtask at once', async () => {
    const problems: string[] = [];
    const parents = await taskPerRound(lanesFor(2), (round) => ({ title: `Parent ${round}` }));
    const subtasks = await taskPerRound(lanesFor(2), (round) => ({ title: `Subtask ${round}`, parentId: parents[round].id }));
    await inLanes(lanesFor(2), RACE_ROUNDS, async (round, lane) => {
      const { api } = lanes[lane];
      const [parent, subtask] = [parents[round], subtasks[round]];
      expect((await api.delete(`/api/v1/tasks/${parent.id}`)).status).toBe(204);
      const [restore, purge] = await race(
        'restore a parent, purge its subtask',
        () => api.post(`/api/v1/trash/${parent.id}/restore`),
        () => api.delete(`/api/v1/trash/${subtask.id}`),
      );
      if (restore.status !== 200) problems.push(`round ${round}: the restore answered ${restore.status} ${restore.body?.code}`);
      const [subtaskLive, subtaskExists] = await Promise.all([live(api, subtask.id), exists(subtask.id)]);
      if (purge.status === 204 && subtaskExists) problems.push(`round ${round}: purged, yet the subtask is still there`);
      if (purge.status === 404 && !subtaskLive) problems.push(`round ${round}: the purge found nothing, yet the subtask did not come back`);
      if (![204, 404].includes(purge.status)) problems.push(`round ${round}: the purge answered ${purge.status}`);
    });
    expect(problems).toEqual([]);
  });

  it('applies each PATCH on top of the one before it: two label sets at once, each answer showing what it set, history chained', async () => {
    const problems: string[] = [];
    const tasks = await taskPerRound(lanesFor(2), (round) => ({ title: `Labels ${round}` }));
    await inLanes(lanesFor(2), RACE_ROUNDS, async (round, lane) => {
      const { api, project } = lanes[lane];
      const labels = project.labels.map((label) => label.id);
      const task = tasks[round];
      const [all, none] = await race(
        'two label sets',
        () => api.patch(`/api/v1/tasks/${task.id}`, { labelIds: labels }),
        () => api.patch(`/api/v1/tasks/${task.id}`, { labelIds: [] }),
      );
      const shown = (answer: Answer) => answer.body.task.labels.map((label: Json) => label.id).sort();
      if (all.status !== 200 || none.status !== 200) problems.push(`round ${round}: answered ${all.status} and ${none.status}`);
      else {
        if (!isDeepStrictEqual(shown(all), [...labels].sort()))
          problems.push(`round ${round}: the PATCH of three labels answered ${shown(all).length}`);
        if (shown(none).length !== 0) problems.push(`round ${round}: the PATCH of no label answered ${shown(none).length}`);
      }
      const history = (await api.get(`/api/v1/tasks/${task.id}/history`)).body.history.reverse();
      const problem = replayProblem(history, { labelIds: [] });
      if (problem) problems.push(`round ${round}: ${problem}`);
    });
    expect(problems).toEqual([]);
  });

  it('moves updatedAt forward only: a PATCH and the deletion of the task’s sprint at once; updatedSince from the PATCH’s answer finds the task', async () => {
    const problems: string[] = [];
    await inLanes(lanesFor(2), RACE_ROUNDS, async (round, lane) => {
      const { api } = lanes[lane];
      const { id: sprintId } = await sprint(api, `Going ${round}`);
      const task = await create(api, { title: `Time ${round}`, sprintId });
      const [patch, remove] = await race(
        'a PATCH and the deletion of its sprint',
        () => api.patch(`/api/v1/tasks/${task.id}`, { title: `Time ${round} edited` }),
        () => api.delete(`/api/v1/sprints/${sprintId}`),
      );
      expect([patch.status, remove.status]).toEqual([200, 204]);
      const [final, since] = await Promise.all([
        api.get(`/api/v1/tasks/${task.id}`).then((answer) => answer.body.task),
        api.get(`/api/v1/tasks?updatedSince=${encodeURIComponent(patch.body.task.updatedAt)}&limit=100`),
      ]);
      if (final.updatedAt < patch.body.task.updatedAt)
        problems.push(`round ${round}: updatedAt ${final.updatedAt} is before the PATCH's ${patch.body.task.updatedAt}`);
      if (!since.body.tasks.some((found: Json) => found.id === task.id))
        problems.push(`round ${round}: updatedSince from the PATCH's answer misses the task`);
    });
    expect(problems).toEqual([]);
  });

  it('answers no deadlock: PATCHes into, out of and within a sprint while it is deleted', async () => {
    await inLanes(lanesFor(5), RACE_ROUNDS, async (round, lane) => {
      const { api } = lanes[lane];
      const [going, other] = await Promise.all([sprint(api, `Deleted ${round}`), sprint(api, `Other ${round}`)]);
      const tasks = await createEach(
        api,
        [0, 1, 2, 3].map((i) => ({ title: `In ${round}.${i}`, sprintId: i === 3 ? null : going.id })),
      );
      const answered = await race(
        'PATCHes while their sprint is deleted',
        () => api.patch(`/api/v1/tasks/${tasks[0].id}`, { sprintId: other.id }),
        () => api.patch(`/api/v1/tasks/${tasks[1].id}`, { title: `Edited ${round}`, priority: 'high' }),
        () => api.patch(`/api/v1/tasks/${tasks[2].id}`, { status: 'done', sprintId: going.id }),
        () => api.patch(`/api/v1/tasks/${tasks[3].id}`, { sprintId: going.id }),
        () => api.delete(`/api/v1/sprints/${going.id}`),
      );
      // A PATCH into the sprint after it is gone finds no such sprint: 404.
      expect(answered.map((answer, i) => ((i === 2 || i === 3) && answer.status === 404 ? 200 : answer.status))).toEqual([200, 200, 200, 200, 204]);
      const shown = await Promise.all(tasks.map(async (task) => (await api.get(`/api/v1/tasks/${task.id}`)).body.task.sprint));
      for (const sprintShown of shown) expect(sprintShown?.id).not.toBe(going.id);
    });
  });

  it('answers no deadlock, and leaves no open task in a closed sprint: moves between sprints while the app closes one with a destination', async () => {
    const problems: string[] = [];
    await inLanes(lanesFor(6), RACE_ROUNDS, async (round, lane) => {
      const { api } = lanes[lane];
      const [closing, next, third] = await Promise.all([
        sprint(api, `Closing ${round}`),
        sprint(api, `Next ${round}`),
        sprint(api, `Third ${round}`),
      ]);
      expect((await admin.post(`/admin/v1/sprints/${closing.id}/activate`)).status).toBe(200);
      const tasks = await createEach(
        api,
        [0, 1, 2, 3, 4].map((i) => ({ title: `Move ${round}.${i}`, sprintId: i < 4 ? closing.id : third.id })),
      );
      const answered = await race(
        'moves while the sprint closes',
        () => api.patch(`/api/v1/tasks/${tasks[0].id}`, { sprintId: next.id }),
        () => api.patch(`/api/v1/tasks/${tasks[1].id}`, { sprintId: third.id }),
        () => api.patch(`/api/v1/tasks/${tasks[2].id}`, { status: 'done' }),
        () => api.patch(`/api/v1/tasks/${tasks[3].id}`, { title: `Still open ${round}` }),
        () => api.patch(`/api/v1/tasks/${tasks[4].id}`, { sprintId: closing.id }),
        () => admin.post(`/admin/v1/sprints/${closing.id}/close`, { moveOpenTasksTo: next.id }),
      );
      // Into the sprint once it is closed: 404 (a closed sprint accepts no task).
      expect(answered.map((answer, i) => (i === 4 && answer.status === 404 ? 200 : answer.status))).toEqual([200, 200, 200, 200, 200, 200]);
      const open = await api.get(`/api/v1/tasks?sprintId=${closing.id}&status=backlog,planning,todo,in_progress,in_review&limit=100`);
      if (open.body.total !== 0) problems.push(`round ${round}: ${open.body.total} open tasks left in the closed sprint`);
    });
    expect(problems).toEqual([]);
  });

  it('answers no deadlock, and keeps the sprint report equal to the sprint’s tasks: re-estimates, completions and moves out of the active sprint while it is renamed', async () => {
    const problems: string[] = [];
    const count = lanesFor(4);
    // An active sprint per lane: each lane's rounds add to its own report.
    const active = await Promise.all(lanes.slice(0, count).map(({ api }, lane) => sprint(api, `Active while renamed ${lane}`)));
    for (const { id } of active) expect((await admin.post(`/admin/v1/sprints/${id}/activate`)).status).toBe(200);
    await inLanes(count, RACE_ROUNDS, async (round, lane) => {
      const { api } = lanes[lane];
      const { id } = active[lane];
      const tasks = await createEach(
        api,
        [0, 1, 2].map((i) => ({ title: `Ledger ${round}.${i}`, sprintId: id, estimate: 2 })),
      );
      const answered = await race(
        'the active sprint’s tasks while it is renamed',
        () => api.patch(`/api/v1/tasks/${tasks[0].id}`, { estimate: 5 }),
        () => api.patch(`/api/v1/tasks/${tasks[1].id}`, { status: 'done' }),
        () => api.patch(`/api/v1/tasks/${tasks[2].id}`, { sprintId: null }),
        () => api.patch(`/api/v1/sprints/${id}`, { name: `Active while renamed ${round}` }),
      );
      expect(answered.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      const [report, inSprint] = await Promise.all([
        api.get(`/api/v1/sprints/${id}/report`).then((answer) => answer.body.report),
        api.get(`/api/v1/tasks?sprintId=${id}&limit=100`).then((answer) => answer.body.total),
      ]);
      const { scope, completed } = report;
      // The lane's rounds so far, this one included.
      const done = Math.floor(round / count) + 1;
      const expected = { tasks: 2 * done, points: 7 * done, unestimated: 0 };
      if (!isDeepStrictEqual(scope, expected) || inSprint !== expected.tasks)
        problems.push(`round ${round}: the report's scope is ${JSON.stringify(scope)}, the sprint holds ${inSprint} tasks`);
      if (completed.tasks !== done) problems.push(`round ${round}: the report counts ${completed.tasks} completed tasks`);
    });
    for (const { id } of active) expect((await admin.post(`/admin/v1/sprints/${id}/close`, {})).status).toBe(200);
    expect(problems).toEqual([]);
  });

  it('never closes a cycle: the same dependency added from both ends at once', async () => {
    const [as, bs] = [
      await taskPerRound(lanesFor(2), (round) => ({ title: `A ${round}` })),
      await taskPerRound(lanesFor(2), (round) => ({ title: `B ${round}` })),
    ];
    await inLanes(lanesFor(2), RACE_ROUNDS, async (round, lane) => {
      const { api } = lanes[lane];
      const [a, b] = [as[round], bs[round]];
      const answered = await race(
        'a dependency from both ends',
        () => api.post(`/api/v1/tasks/${a.id}/dependencies`, { blockedById: b.id }),
        () => api.post(`/api/v1/tasks/${b.id}/dependencies`, { blockedById: a.id }),
      );
      expect(answered.map((answer) => [answer.status, answer.body?.code ?? null]).sort()).toEqual([
        [201, null],
        [409, 'dependency_cycle'],
      ]);
    });
  });

  it('records history whose from is the state before each change, after a mixed concurrent run, replayed over each task’s whole history', async () => {
    // One run on the same four tasks, round after round: one lane (six requests at once).
    const { api, project } = lanes[0];
    const sprints = [await sprint(api, 'Mixed A'), await sprint(api, 'Mixed B')];
    const tasks: Json[] = [];
    for (let i = 0; i < 4; i++) tasks.push(await create(api, { title: `Mixed ${i}` }));
    const values = {
      title: (round: number) => `Title ${round}`,
      status: (round: number) => ['todo', 'in_progress', 'done', 'backlog'][round % 4],
      priority: (round: number) => ['high', 'low', 'none'][round % 3],
      assigneeId: (round: number) => [project.members[0].membershipId, project.members[1].membershipId, null][round % 3],
      sprintId: (round: number) => [sprints[0].id, sprints[1].id, null][round % 3],
      labelIds: (round: number) => project.labels.slice(0, round % 4).map((label) => label.id),
      dueDate: (round: number) => [null, '2026-12-24', '2027-01-31'][round % 3],
    };
    const fields = Object.keys(values) as (keyof typeof values)[];
    for (let round = 0; round < RACE_ROUNDS; round++) {
      await race(
        'mixed PATCHes',
        ...Array.from({ length: 6 }, (_, i) => {
          const field = fields[(round + i) % fields.length];
          return () => api.patch(`/api/v1/tasks/${tasks[(round + i) % tasks.length].id}`, { [field]: values[field](round + i) });
        }),
      );
    }
    const problems: string[] = [];
    for (const task of tasks) {
      const history = [];
      for (let cursor: string | null = null, first = true; first || cursor; first = false) {
        const page: Answer = await api.get(`/api/v1/tasks/${task.id}/history?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        history.push(...page.body.history);
        cursor = page.body.nextCursor;
      }
      const current = (await api.get(`/api/v1/tasks/${task.id}`)).body.task;
      const state = {
        title: current.title,
        status: current.status,
        priority: current.priority,
        assigneeId: current.assignee?.membershipId ?? null,
        sprintId: current.sprint?.id ?? null,
        labelIds: current.labels.map((label: Json) => label.id).sort(),
        dueDate: current.dueDate,
      };
      // What a created entry leaves out is the default: no labels.
      const problem = replayProblem(history.reverse(), { labelIds: [] }, state);
      if (problem) problems.push(`${task.title}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });

  it('keeps time moving forward: occurredAt follows sequence, and each task’s updatedAt never goes back, over every event of the races', async () => {
    // Each lane's project has a feed of its own.
    const feeds = await Promise.all(
      lanes.map(async ({ api }) => {
        const events: Json[] = [];
        for (let after = 0, more = true; more;) {
          const page = (await api.get(`/api/v1/events?after=${after}&limit=1000`)).body;
          events.push(...page.events);
          [after, more] = [page.nextAfter, page.hasMore];
        }
        return events;
      }),
    );
    const problems: string[] = [];
    const lastUpdate = new Map<string, string>();
    for (const events of feeds)
      events.forEach((event, index) => {
        if (index > 0 && event.occurredAt < events[index - 1].occurredAt) {
          problems.push(
            `event ${event.sequence} occurred at ${event.occurredAt}, before event ${events[index - 1].sequence} (${events[index - 1].occurredAt})`,
          );
        }
        const task = event.data.task;
        if (!task?.updatedAt) return;
        const before = lastUpdate.get(task.id);
        if (before && task.updatedAt < before)
          problems.push(`event ${event.sequence}: task ${task.id} went back from ${before} to ${task.updatedAt}`);
        lastUpdate.set(task.id, task.updatedAt);
      });
    expect(feeds.flat().length).toBeGreaterThan(RACE_ROUNDS);
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it('answered no race with a conflict or a server error, and retried no deadlock nor serialization failure', async () => {
    // The one conflict a race may answer by design: a subtask's restore after its parent went to the trash.
    const byDesign = (answer: Answer) => answer.status === 409 && answer.body.detail.startsWith('Its parent task is in the trash');
    const failed = answers.filter(
      ({ answer }) => (answer.status === 409 && answer.body?.code === 'conflict' && !byDesign(answer)) || answer.status >= 500,
    );
    expect(failed.slice(0, 10).map(({ race: name, answer }) => `${name}: ${answer.status} ${answer.body?.code}`)).toEqual([]);
    expect(answers.length).toBeGreaterThan(RACE_ROUNDS * 10);
    expect(await counter(baseUrl, 'db_write_retries_total', { reason: 'deadlock' })).toBe(0);
    expect(await counter(baseUrl, 'db_write_retries_total', { reason: 'serialization_failure' })).toBe(0);
  });
});

/**
 * Replays a task's history, oldest first: each change's `from` must be the value the entries
 * before it left (starting from `initial`, and from what `created` set), and the end must be
 * `final` when given. Answers the first problem, or null.
 */
function replayProblem(history: Json[], initial: Record<string, unknown>, final?: Record<string, unknown>): string | null {
  const state: Record<string, unknown> = { ...initial };
  for (const entry of history) {
    for (const change of entry.changes) {
      if (entry.action !== 'created' && change.field in state && !isDeepStrictEqual(state[change.field], change.from)) {
        return `${entry.action} at ${entry.createdAt}: ${change.field} from ${JSON.stringify(change.from)}, but it was ${JSON.stringify(state[change.field])}`;
      }
      state[change.field] = change.to;
    }
  }
  for (const [field, value] of Object.entries(final ?? {})) {
    if (!isDeepStrictEqual(state[field] ?? null, value))
      return `replayed ${field} is ${JSON.stringify(state[field])}, the task has ${JSON.stringify(value)}`;
  }
  return null;
}
