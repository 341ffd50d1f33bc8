import { asAdmin, createProject, createTask, TaskJson, TestProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

/** Today and other days as Madrid calendar days, as the service computes `today`. */
function madridDay(offset = 0): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Madrid' }).format(new Date());
  const date = new Date(`${today}T00:00:00.000Z`);
  date.setUTCDate(date.getUTCDate() + offset);
  return date.toISOString().slice(0, 10);
}

const url = (filter: string, extra = '') => `/api/v1/tasks?filter=${encodeURIComponent(filter)}${extra}`;

describe('filter (decisions.md section 25)', () => {
  const t = useTestApp();

  describe('fields, operators, precedence and the null rules', () => {
    let project: TestProject;
    const byTitle = new Map<string, string>();
    let sprint2: string;

    beforeAll(async () => {
      project = await createProject(t, 'Filter rules');
      const [ada, grace] = project.members;
      const [bug, feature, docs] = project.labels;
      const sprint = async (name: string) => (await project.api.post('/api/v1/sprints', { name }).expect(201)).body.sprint.id as string;
      const sprint1 = await sprint('Sprint 1');
      sprint2 = await sprint('Sprint 2');
      await asAdmin(t).post(`/admin/v1/sprints/${sprint1}/activate`).expect(200);
      const make = async (title: string, body: Record<string, unknown>) => {
        const task = await createTask(project, { title, ...body });
        byTitle.set(title, task.id);
        return task;
      };
      const a = await make('A', {
        status: 'todo',
        priority: 'urgent',
        assigneeId: ada.membershipId,
        labelIds: [bug.id],
        sprintId: sprint1,
        dueDate: madridDay(-1),
        estimate: 3,
      });
      const b = await make('B', {
        status: 'in_progress',
        priority: 'high',
        assigneeId: grace.membershipId,
        labelIds: [bug.id, feature.id],
        sprintId: sprint1,
        dueDate: madridDay(3),
      });
      await make('C', {});
      const d = await make('D', {
        priority: 'low',
        assigneeId: ada.membershipId,
        labelIds: [docs.id],
        sprintId: sprint2,
        dueDate: madridDay(10),
        estimate: 0.5,
      });
      await project.api.patch(`/api/v1/tasks/${d.id}`, { status: 'done' }).expect(200);
      const e = await make('E: Login page WIP 100%_x', { status: 'todo', priority: 'medium', parentId: a.id });
      byTitle.set('E', e.id);
      await project.api.post(`/api/v1/tasks/${e.id}/dependencies`, { blockedById: b.id }).expect(201);
    });

    const titles = async (filter: string) => {
      const res = await project.api.get(url(filter)).expect(200);
      expect(res.body.total).toBe(res.body.tasks.length);
      const names = new Map([...byTitle].map(([name, id]) => [id, name]));
      return res.body.tasks
        .map((task: TaskJson) => names.get(task.id)!.slice(0, 1))
        .sort()
        .join('');
    };

    const cases: [rule: string, filter: string | (() => string), expected: string][] = [
      ['status = matches the status', 'status = todo', 'AE'],
      ['status != matches the other statuses', 'status != todo', 'BCD'],
      ['status in matches any listed', 'status in (todo, done)', 'ADE'],
      ['status not in matches none listed', 'status not in (todo, done)', 'BC'],
      ['keywords, field names and enum values are case-insensitive', 'STATUS In (TODO, Done) AND Priority = URGENT', 'A'],
      ['priority = matches the priority', 'priority = urgent', 'A'],
      ['assignee = takes a member name, case-insensitively', 'assignee = ada', 'AD'],
      ['assignee = takes a membershipId', () => `assignee = ${project.members[1].membershipId}`, 'B'],
      ['assignee != includes unassigned tasks', 'assignee != Ada', 'BCE'],
      ['assignee not in includes unassigned tasks', 'assignee not in (Ada, "Grace")', 'CE'],
      ['assignee is empty matches unassigned tasks', 'assignee is empty', 'CE'],
      ['assignee is not empty matches assigned tasks', 'assignee is not empty', 'ABD'],
      ['label = X means the task carries X among its labels', 'label = bug', 'AB'],
      ['label = takes a label id', () => `label = ${project.labels[2].id}`, 'D'],
      ['label != X includes unlabelled tasks', 'label != bug', 'CDE'],
      ['label in matches a task carrying any of them', 'label in (feature, docs)', 'BD'],
      ['label not in includes unlabelled tasks', 'label not in (bug, docs)', 'CE'],
      ['label is empty matches tasks without labels', 'label is empty', 'CE'],
      ['label is not empty matches tasks with a label', 'label is not empty', 'ABD'],
      ['sprint = active is the active sprint', 'sprint = active', 'AB'],
      ['sprint = takes a quoted sprint name', 'sprint = "sprint 2"', 'D'],
      ['sprint = takes a sprint id', () => `sprint = ${sprint2}`, 'D'],
      ['sprint != includes tasks without sprint', 'sprint != active', 'CDE'],
      ['sprint is empty matches tasks without sprint', 'sprint is empty', 'CE'],
      ['parent = takes a task id', () => `parent = ${byTitle.get('A')}`, 'E'],
      ['parent != includes top-level tasks', () => `parent != ${byTitle.get('A')}`, 'ABCD'],
      ['parent is empty matches top-level tasks', 'parent is empty', 'ABCD'],
      ['due < today matches overdue tasks, never tasks without due date', 'due < today', 'A'],
      ['due <= takes today+Nd', 'due <= today+3d', 'AB'],
      ['due > never matches tasks without due date', 'due > today', 'BD'],
      ['due >= takes a YYYY-MM-DD day', () => `due >= ${madridDay(10)}`, 'D'],
      ['due = takes today-Nd', 'due = today-1d', 'A'],
      ['due < takes today+Nw', 'due < today+2w and due > today+1w', 'D'],
      ['due != includes tasks without due date', 'due != today-1d', 'BCDE'],
      ['not due < today includes tasks without due date', 'not due < today', 'BCDE'],
      ['due is empty matches tasks without due date', 'due is empty', 'CE'],
      ['estimate > compares points, never matching unestimated tasks', 'estimate > 1', 'A'],
      ['estimate <= compares points', 'estimate <= 3', 'AD'],
      ['estimate = takes decimals', 'estimate = 0.5', 'D'],
      ['estimate != includes unestimated tasks', 'estimate != 3', 'BCDE'],
      ['estimate is empty matches unestimated tasks', 'estimate is empty', 'BCE'],
      ['estimated = true matches estimated tasks', 'estimated = true', 'AD'],
      ['estimated = false matches unestimated tasks', 'estimated = false', 'BCE'],
      ['blocked = true matches tasks waiting for an unfinished blocker', 'blocked = true', 'E'],
      ['blocked != true matches the others', 'blocked != true', 'ABCD'],
      ['completed is not empty matches finished tasks', 'completed is not empty', 'D'],
      ['completed = today compares by Madrid day', 'completed = today', 'D'],
      ['completed < never matches unfinished tasks', 'completed < today+1d', 'D'],
      ['not completed < matches exactly the others', 'not completed < today+1d', 'ABCE'],
      ['created = today compares by Madrid day', 'created = today', 'ABCDE'],
      ['created < today matches nothing made today', 'created < today', ''],
      ['updated >= today-7d matches what changed this week', 'updated >= today-7d', 'ABCDE'],
      ['title ~ is a case-insensitive substring', 'title ~ "login"', 'E'],
      ['title ~ reads % and _ literally', 'title ~ "100%_"', 'E'],
      ['title ~ takes \\" and \\\\ in a quoted value', 'title ~ "a\\"b\\\\c"', ''],
      ['and binds tighter than or', 'status = done or status = todo and priority = urgent', 'AD'],
      ['parentheses group', '(status = done or status = todo) and priority = urgent', 'A'],
      ['not applies to the condition that follows it', 'not status = todo and priority = high', 'B'],
      ['not applies to a parenthesised expression', 'not (status = todo or status = done)', 'BC'],
      ['not not is the expression itself', 'not not status = todo', 'AE'],
      ['white space is optional around operators', 'status=todo and(priority=urgent)', 'A'],
    ];

    it.each(cases)('%s (%s)', async (_rule, filter, expected) => {
      expect(await titles(typeof filter === 'string' ? filter : filter())).toBe(expected);
    });
  });
});
