import { createProject, TestProject } from './support/fixtures';
import { atOnce, describeRaces, Json, listen, RACE_ROUNDS, raceClient, RaceClient } from './support/races';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

/**
 * Rounds of each status change at each offset: RACE_ROUNDS / 200 (1 by default, 28 rounds in all).
 * Enough to fail without the fix: each round of a reopen or an uncancel then failed, whoever came first.
 */
const ROUNDS = Math.max(1, Math.round(RACE_ROUNDS / 200));
/** When the PATCH is sent, in ms after the close (negative: before it). */
const OFFSETS = [-3, -2, -1, 0, 1, 2, 3];
const FINISHED = ['done', 'cancelled'];
const OPEN = 'backlog,planning,todo,in_progress,in_review';

/** The status changes that race the close: two that leave the task open, two that finish it. */
const CHANGES = [
  { name: 'reopen', from: 'done', to: 'in_progress' },
  { name: 'uncancel', from: 'cancelled', to: 'todo' },
  { name: 'finish', from: 'todo', to: 'done' },
  { name: 'cancel', from: 'todo', to: 'cancelled' },
];

const after = (ms: number, send: () => Promise<Json>) => (ms <= 0 ? send() : new Promise((resolve) => setTimeout(resolve, ms)).then(send));

// decisions.md sections 7, 17 and 19: a close and a task's status change at once agree on who came
// first. A status change that commits first is seen by the close (a task it reopened is carried
// over, one it finished stays); one that commits after finds the sprint closed (a task it reopens
// leaves the sprint). Either way no open task stays in the closed sprint, and the frozen report's
// completed, cancelled and carriedOver partition its scope. docs/locking.md says how.
describeRaces('a sprint’s close and a status change of one of its tasks at once', () => {
  let t: TestApp;
  let project: TestProject;
  let api: RaceClient;
  let admin: RaceClient;
  /** Where the project's feed stood after the last round's set-up. */
  let feed = 0;

  beforeAll(async () => {
    t = await startTestApp();
    const baseUrl = await listen(t);
    project = await createProject(t, 'Close races');
    api = raceClient(baseUrl, project.key);
    admin = raceClient(baseUrl, ADMIN_TOKEN);
  });
  afterAll(() => t.close());

  async function ok(answer: Promise<{ status: number; body: Json }>, expected = 200): Promise<Json> {
    const { status, body } = await answer;
    if (status !== expected) throw new Error(`answered ${status}: ${JSON.stringify(body)}`);
    return body;
  }

  /** The feed's events since the last call. */
  async function newEvents(): Promise<Json[]> {
    const events: Json[] = [];
    for (let more = true; more;) {
      const page = await ok(api.get(`/api/v1/events?after=${feed}&limit=1000`));
      events.push(...page.events);
      [feed, more] = [page.nextAfter, page.hasMore];
    }
    return events;
  }

  const sprintOf = async (taskId: string) => (await ok(api.get(`/api/v1/tasks/${taskId}`))).task.sprint?.id ?? null;

  /** One round: the sprint's problems, none when every rule holds. */
  async function round(change: (typeof CHANGES)[number], offset: number, label: string): Promise<string[]> {
    const [closing, next] = await Promise.all([
      ok(api.post('/api/v1/sprints', { name: `Closing ${label}` }), 201),
      ok(api.post('/api/v1/sprints', { name: `Next ${label}` }), 201),
    ]);
    const [s, n] = [closing.sprint.id, next.sprint.id];
    const created = await ok(
      api.post('/api/v1/tasks/bulk', {
        tasks: [
          { title: `T ${label}`, status: change.from, sprintId: s, estimate: 5 },
          { title: `Open ${label}`, status: 'todo', sprintId: s, estimate: 1 },
          { title: `Started ${label}`, status: 'in_progress', sprintId: s, estimate: 2 },
          { title: `Done ${label}`, status: 'done', sprintId: s, estimate: 3 },
        ],
      }),
      201,
    );
    const task = created.tasks[0].id;
    await ok(admin.post(`/admin/v1/sprints/${s}/activate`));
    await newEvents();

    const [patched, closed] = await atOnce(
      () => after(offset, () => api.patch(`/api/v1/tasks/${task}`, { status: change.to })),
      () => after(-offset, () => admin.post(`/admin/v1/sprints/${s}/close`, { moveOpenTasksTo: n })),
    );
    const problems: string[] = [];
    if (patched.status !== 200 || closed.status !== 200) return [`answered ${patched.status} to the PATCH and ${closed.status} to the close`];

    const [events, open, { report }, listed, sprintOfTask] = await Promise.all([
      newEvents(),
      ok(api.get(`/api/v1/tasks?sprintId=${s}&status=${OPEN}&limit=100`)),
      ok(api.get(`/api/v1/sprints/${s}/report`)),
      ok(api.get(`/api/v1/tasks?sprintId=${n}&limit=100`)),
      sprintOf(task),
    ]);
    const patchEvent = events.find((event) => event.type === 'task.updated' && event.actor !== 'App' && event.data.task.id === task);
    const closeEvent = events.find((event) => event.type === 'sprint.closed');
    const movedByClose = events.some((event) => event.type === 'task.updated' && event.actor === 'App' && event.data.task.id === task);
    const patchFirst = patchEvent.sequence < closeEvent.sequence;
    const endsOpen = !FINISHED.includes(change.to);

    if (open.total !== 0) problems.push(`${open.total} open task(s) left in the closed sprint`);

    for (const unit of ['tasks', 'points'] as const) {
      const sum = report.completed[unit] + report.cancelled[unit] + report.carriedOver[unit];
      if (sum !== report.scope[unit]) problems.push(`completed + cancelled + carriedOver = ${sum} ${unit}, the scope ${report.scope[unit]}`);
    }
    if (JSON.stringify(report) !== JSON.stringify(closeEvent.data.report)) problems.push('the report is not the one sprint.closed carried');
    const inNext = new Set(listed.tasks.map((moved: Json) => moved.id));
    const carried = report.tasks.filter((counted: Json) => counted.carriedOver).map((counted: Json) => counted.id);
    if (carried.some((id: string) => !inNext.has(id)) || carried.length !== inNext.size)
      problems.push(`carried over ${carried.length} task(s); the next sprint holds ${inNext.size}`);

    // What the feed's order says happened to the task.
    const reported = report.tasks.find((counted: Json) => counted.id === task);
    const carriedOver = patchFirst === endsOpen;
    const expected = {
      sprint: carriedOver ? n : patchFirst ? s : null,
      movedByClose: carriedOver,
      leftInPatch: !patchFirst && endsOpen,
      reported: { carriedOver, status: patchFirst ? change.to : change.from },
    };
    const actual = {
      sprint: sprintOfTask,
      movedByClose,
      leftInPatch: patchEvent.data.changes.some((field: Json) => field.field === 'sprintId' && field.from === s && field.to === null),
      reported: { carriedOver: reported?.carriedOver, status: reported?.status },
    };
    if (JSON.stringify(actual) !== JSON.stringify(expected))
      problems.push(`the PATCH committed ${patchFirst ? 'first' : 'second'}, but ${JSON.stringify(actual)} (expected ${JSON.stringify(expected)})`);
    return problems;
  }

  for (const change of CHANGES) {
    it(`${change.name} (${change.from} → ${change.to}) against the close, sent 0 to 3 ms apart: no open task stays in the closed sprint, the report partitions its scope, carried tasks are in the next sprint, and the feed's order is what happened`, async () => {
      const problems: string[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        for (const offset of OFFSETS) {
          const label = `${change.name} ${i} ${offset}`;
          for (const problem of await round(change, offset, label)) problems.push(`${label}: ${problem}`);
        }
      }
      expect(problems).toEqual([]);
    });
  }
});
