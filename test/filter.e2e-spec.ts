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

  describe('errors: 400 invalid_filter with the position of the first character that does not fit', () => {
    let project: TestProject;
    beforeAll(async () => {
      project = await createProject(t, 'Filter errors');
      for (const name of ['Sam', 'sam']) await asAdmin(t).post(`/admin/v1/projects/${project.id}/members`, { name }).expect(201);
    });

    const refused = async (filter: string, position: number, detail?: string | RegExp) => {
      const res = await project.api.get(url(filter)).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_filter', position });
      expect(res.body.detail).toMatch(new RegExp(`at position ${position}$`));
      if (detail !== undefined) expect(res.body.detail).toMatch(detail);
      return res.body;
    };

    it('says a value was expected after "="', async () => {
      expect((await refused('status = ', 9)).detail).toBe('expected a value after "=" at position 9');
    });
    it('says what may follow "and"', async () => {
      await refused('status = todo and', 17, 'expected "(", "not" or a field name after "and" at position 17');
    });
    it('refuses a field outside the allow-list at its first character', async () => {
      await refused('bogus = 1', 0, 'expected "(", "not" or a field name at position 0');
    });
    it('says an operator was expected after a field', async () => {
      await refused('status todo', 7, /an operator/);
    });
    it('refuses an operator the field does not take', async () => {
      await refused('status ~ todo', 7, 'expected an operator of status (=, !=, in, not in) at position 7');
      await refused('estimated < true', 10, /operator of estimated/);
      await refused('title = x', 6, /operator of title/);
      await refused('status is empty', 7, /operator of status/);
    });
    it('refuses a value the field does not take', async () => {
      await refused('status = nope', 9, /expected a status/);
      await refused('priority in (high, top)', 19, /expected a priority/);
      await refused('due < tomorrow', 6, /expected a day/);
      await refused('due < 2026-02-30', 6, /expected a day/);
      await refused('estimate > lots', 11, /number of points/);
      await refused('blocked = maybe', 10, /true or false/);
      await refused('parent = nope', 9, /task id/);
    });
    it('refuses a name that matches nothing, at the value', async () => {
      await refused('status = todo and assignee = Nobody', 29, /no member/);
      await refused('label = nolabel', 8, /no label/);
      await refused('sprint = "no such sprint"', 9, /no sprint/);
    });
    it('refuses a name that matches several, at the value', async () => {
      await refused('assignee = sam', 11, '2 members are named "sam": use a membershipId at position 11');
    });
    it('refuses an unclosed parenthesis, string or list', async () => {
      await refused('(status = todo', 14, /expected "\)", "and" or "or"/);
      await refused('title ~ "abc', 12, /closing "/);
      await refused('status in (todo, done', 21);
      await refused('status = todo)', 13);
    });
    it('refuses an escape other than \\" and \\\\ inside quotes, at the escaped character', async () => {
      await refused('title ~ "a\\nb"', 11);
    });
    it('counts the position in characters (code points), as lengths are counted: an emoji before the error is one', async () => {
      await refused('title ~ "😀" and bogus = 1', 16, 'expected "(", "not" or a field name after "and" at position 16');
      await refused('title ~ "😀😀" or status = nope', 25, /expected a status/);
      await refused('title ~ "😀" or label = nolabel', 23, /no label/);
      await refused('title ~ "😀" or estimated < true', 25, /operator of estimated/);
      await refused(`title ~ "😀" or ${'('.repeat(17)}status = todo${')'.repeat(17)}`, 31, /deeper than 16 parentheses/);
    });
    it('refuses a keyword where a value belongs', async () => {
      await refused('status = and priority = high', 9, /a value/);
    });
    it('takes 16 levels of parentheses and refuses a 17th at its "("', async () => {
      const nested = (depth: number) => `${'('.repeat(depth)}status = todo${')'.repeat(depth)}`;
      await project.api.get(url(nested(16))).expect(200);
      await refused(nested(17), 16, /deeper than 16 parentheses/);
      await refused(nested(200), 16, /deeper than 16 parentheses/);
    });
    it('takes 100 conditions and refuses a 101st at its start', async () => {
      const conditions = (count: number) => Array.from({ length: count }, () => 'status = todo').join(' or ');
      await project.api.get(url(conditions(100))).expect(200);
      await refused(conditions(101), 100 * 'status = todo or '.length, /more than 100 conditions/);
    });
    it('refuses an empty filter or one over 2000 characters as validation_failed', async () => {
      await project.api.get('/api/v1/tasks?filter=').expect(400);
      const long = `title ~ "${'x'.repeat(1991)}"`;
      expect((await project.api.get(url(long)).expect(400)).body.code).toBe('validation_failed');
    });
    it('answers quotes, backslashes, SQL keywords, %, _ and NUL with 400 or as plain text, never 5xx', async () => {
      const inputs = [
        `title ~ "'; DROP TABLE tasks; --"`,
        `title ~ "\\"`,
        `title ~ "%" or title ~ "_"`,
        `status = 'todo'`,
        `status = todo; DELETE FROM tasks`,
        `assignee = "x' OR '1'='1"`,
        `label = "bug\\" or 1=1 --"`,
        `) or (1=1`,
        `status = todo -- comment`,
        `title ~ "a\u0000b"`,
        `title ~ a\u0000b`,
        `title ~ "\u0001"`,
        `due < 9999-12-31 and created <= 9999-12-31 and updated > 0001-01-01`,
        `created < today+99999w and created > today-99999w`,
        `estimate > 9999999999.9999999999`,
        `sprint = "Robert'); DROP TABLE students;--"`,
        `title ~ "$1" or title ~ "::uuid"`,
      ];
      for (const filter of inputs) {
        const res = await project.api.get(url(filter));
        expect([filter, res.status]).toEqual([filter, expect.any(Number)]);
        expect(res.status === 200 || (res.status === 400 && ['invalid_filter', 'validation_failed'].includes(res.body.code))).toBe(true);
      }
      const stillThere = await project.api.get('/api/v1/tasks').expect(200);
      expect(stillThere.body.total).toBe(0);
    });
  });

  describe('Madrid days', () => {
    let project: TestProject;
    const tasks: Record<string, string> = {};
    beforeAll(async () => {
      project = await createProject(t, 'Filter days');
      // The clock cannot move: the tasks' times can. 2026-03-28 is UTC+1 in Madrid, 2026-07-01 UTC+2.
      const [midnight] = await t.prisma.$queryRawUnsafe<{ at: Date }[]>(
        `SELECT ((now() AT TIME ZONE 'Europe/Madrid')::date::timestamp AT TIME ZONE 'Europe/Madrid') AS at`,
      );
      const times: Record<string, string> = {
        beforeMarch: '2026-03-27T22:59:59.999Z',
        atMarch: '2026-03-27T23:00:00.000Z',
        beforeJuly: '2026-06-30T21:59:59.999Z',
        atJuly: '2026-06-30T22:00:00.000Z',
        beforeToday: new Date(midnight.at.getTime() - 1).toISOString(),
        atToday: midnight.at.toISOString(),
      };
      for (const [name, at] of Object.entries(times)) {
        tasks[name] = (await createTask(project, { title: name })).id;
        await t.prisma.$executeRawUnsafe(
          'UPDATE tasks SET created_at = $1::timestamptz, updated_at = $1::timestamptz WHERE id = $2::uuid',
          at,
          tasks[name],
        );
      }
    });

    const names = async (filter: string) => {
      const res = await project.api.get(url(filter)).expect(200);
      const byId = new Map(Object.entries(tasks).map(([name, id]) => [id, name]));
      return res.body.tasks.map((task: TaskJson) => byId.get(task.id)).sort();
    };

    it('created = day starts at Madrid midnight (winter time)', async () => {
      expect(await names('created = 2026-03-28')).toEqual(['atMarch']);
      expect(await names('created = 2026-03-27')).toEqual(['beforeMarch']);
    });
    it('created = day starts at Madrid midnight (summer time)', async () => {
      expect(await names('created = 2026-07-01')).toEqual(['atJuly']);
    });
    it('created < and <= compare by Madrid day', async () => {
      expect(await names('created < 2026-03-28')).toEqual(['beforeMarch']);
      expect(await names('created <= 2026-03-27')).toEqual(['beforeMarch']);
    });
    it('created > and >= compare by Madrid day', async () => {
      expect(await names('created > 2026-06-30 and created < 2026-07-02')).toEqual(['atJuly']);
      expect(await names('created >= 2026-03-28 and created <= 2026-03-28')).toEqual(['atMarch']);
    });
    it('today is the Madrid day: a task made a millisecond before its midnight is yesterday', async () => {
      expect(await names('created = today')).toEqual(['atToday']);
      expect(await names('created = today-1d')).toEqual(['beforeToday']);
      expect(await names('updated >= today-1d and updated < today')).toEqual(['beforeToday']);
    });
  });

  describe('totals, pages, both sorts and cursors', () => {
    let project: TestProject;
    const matching: string[] = [];
    beforeAll(async () => {
      project = await createProject(t, 'Filter pages');
      const bug = project.labels[0].id;
      for (let i = 0; i < 10; i++) {
        const match = i % 3 !== 0;
        const task = await createTask(project, { title: `Task ${i}`, priority: match ? 'high' : 'low', labelIds: match ? [bug] : [] });
        if (match) matching.push(task.id);
      }
    });

    async function walk(query: string, limit: number) {
      const seen: string[] = [];
      const totals: number[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { tasks: TaskJson[]; total: number; nextCursor: string | null } } = await project.api
          .get(`/api/v1/tasks?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
          .expect(200);
        seen.push(...res.body.tasks.map((task) => task.id));
        totals.push(res.body.total);
        cursor = res.body.nextCursor;
      } while (cursor);
      return { seen, totals };
    }

    it.each(['created', 'rank'])('pages through a filtered list sorted by %s: each match once, the exact total on every page', async (sort) => {
      const filter = `&filter=${encodeURIComponent('label = bug and priority = high')}&sort=${sort}`;
      const { seen, totals } = await walk(filter, 2);
      expect([...seen].sort()).toEqual([...matching].sort());
      expect(new Set(seen).size).toBe(seen.length);
      expect(totals).toEqual([6, 6, 6]);
      const unfiltered = (await walk(`&sort=${sort}`, 100)).seen.filter((id) => matching.includes(id));
      expect(seen).toEqual(unfiltered);
    });

    it('combines filter with the other filters by AND', async () => {
      const res = await project.api.get(url('label = bug', '&priority=low')).expect(200);
      expect(res.body.total).toBe(0);
      const both = await project.api.get(url('priority = high', `&labelId=${project.labels[0].id}`)).expect(200);
      expect(both.body.total).toBe(6);
    });

    it('keeps the total exact after writes, whether the filter reads the task row alone or its labels', async () => {
      const rowOnly = url('priority = high');
      const labelled = url('label = docs');
      expect((await project.api.get(rowOnly).expect(200)).body.total).toBe(6);
      expect((await project.api.get(labelled).expect(200)).body.total).toBe(0);
      const task = await createTask(project, { title: 'Late', priority: 'high' });
      expect((await project.api.get(rowOnly).expect(200)).body.total).toBe(7);
      await project.api.patch(`/api/v1/tasks/${task.id}`, { labelIds: [project.labels[2].id] }).expect(200);
      expect((await project.api.get(labelled).expect(200)).body.total).toBe(1);
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      expect((await project.api.get(rowOnly).expect(200)).body.total).toBe(6);
      expect((await project.api.get(labelled).expect(200)).body.total).toBe(0);
    });

    it('binds a cursor to its filter: another filter or none is 400 invalid_cursor, another limit is fine', async () => {
      const first = await project.api.get(url('priority = high', '&limit=2')).expect(200);
      const cursor = `&cursor=${encodeURIComponent(first.body.nextCursor)}`;
      expect((await project.api.get(url('priority = low', `&limit=2${cursor}`)).expect(400)).body.code).toBe('invalid_cursor');
      expect((await project.api.get(url('priority = high ', `&limit=2${cursor}`)).expect(400)).body.code).toBe('invalid_cursor');
      expect((await project.api.get(`/api/v1/tasks?limit=2${cursor}`).expect(400)).body.code).toBe('invalid_cursor');
      await project.api.get(url('priority = high', `&limit=3${cursor}`)).expect(200);
    });

    it('filters the trash too, with its total and a cursor bound to the filter', async () => {
      const [a, b] = matching;
      await project.api.delete(`/api/v1/tasks/${a}`).expect(204);
      await project.api.delete(`/api/v1/tasks/${b}`).expect(204);
      const bugs = await project.api.get(`/api/v1/trash?limit=1&filter=${encodeURIComponent('label = bug')}`).expect(200);
      expect(bugs.body.total).toBe(2);
      const next = `&cursor=${encodeURIComponent(bugs.body.nextCursor)}`;
      expect((await project.api.get(`/api/v1/trash?limit=1${next}`).expect(400)).body.code).toBe('invalid_cursor');
      const rest = await project.api.get(`/api/v1/trash?limit=1&filter=${encodeURIComponent('label = bug')}${next}`).expect(200);
      expect([bugs.body.tasks[0].id, rest.body.tasks[0].id].sort()).toEqual([a, b].sort());
      expect((await project.api.get(`/api/v1/trash?filter=${encodeURIComponent('priority = low')}`).expect(200)).body.total).toBe(0);
      const bad = await project.api.get(`/api/v1/trash?filter=${encodeURIComponent('label =')}`).expect(400);
      expect(bad.body).toMatchObject({ code: 'invalid_filter', position: 7 });
    });
  });

  describe('text ~ is the search', () => {
    let project: TestProject;
    beforeAll(async () => {
      project = await createProject(t, 'Filter text');
    });
    const found = async (filter: string) => (await project.api.get(url(filter)).expect(200)).body.tasks.map((task: TaskJson) => task.title);

    it('text ~ finds a word only a live comment holds, and stops when the comment is deleted', async () => {
      const task = await createTask(project, { title: 'Billing', description: 'monthly run' });
      await createTask(project, { title: 'Other' });
      const comment = (await project.api.post(`/api/v1/tasks/${task.id}/comments`, { body: 'the Invoice is wrong' }).expect(201)).body.comment;
      expect(await found('text ~ "invoice"')).toEqual(['Billing']);
      expect(await found('text ~ "invoice" and status = backlog')).toEqual(['Billing']);
      expect(await found('not text ~ "invoice"')).toEqual(['Other']);
      await project.api.delete(`/api/v1/tasks/${task.id}/comments/${comment.id}`).expect(204);
      expect(await found('text ~ "invoice"')).toEqual([]);
    });
    it('text ~ takes the search grammar: prefixes and phrases', async () => {
      await createTask(project, { title: 'Deployment of the due date' });
      expect(await found('text ~ "deploy"')).toEqual(['Deployment of the due date']);
      expect(await found('text ~ "\\"due date\\""')).toEqual(['Deployment of the due date']);
      expect(await found('text ~ "!!!"')).toEqual([]);
    });
    it('text takes ~ only', async () => {
      const res = await project.api.get(url('text = invoice')).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_filter', position: 5 });
    });
  });
});
