import fc from 'fast-check';
import { asAdmin, createProject, createTask, TaskJson, TestProject } from './support/fixtures';
import { useTestApp } from './support/test-app';

/** A Madrid calendar day `offset` days from today, as the service reads `today`. */
function madridDay(offset = 0): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Madrid' }).format(new Date());
  const date = new Date(`${today}T00:00:00.000Z`);
  date.setUTCDate(date.getUTCDate() + offset);
  return date.toISOString().slice(0, 10);
}

const STATUSES = ['backlog', 'todo', 'in_progress', 'done'] as const;
const PRIORITIES = ['urgent', 'high', 'none'] as const;
const MEMBERS = ['Ada', 'Grace'] as const;
const LABELS = ['bug', 'feature', 'docs'] as const;
const SPRINTS = ['Sprint 1', 'Sprint 2'] as const;
const WORDS = ['login', 'invoice', 'deploy'] as const;

interface TaskSpec {
  status: (typeof STATUSES)[number];
  priority: (typeof PRIORITIES)[number];
  assignee: number | null;
  labels: number[];
  sprint: number | null;
  due: number | null;
  estimate: number | null;
  word: number;
}

const taskSpec: fc.Arbitrary<TaskSpec> = fc.record({
  status: fc.constantFrom(...STATUSES),
  priority: fc.constantFrom(...PRIORITIES),
  assignee: fc.option(fc.integer({ min: 0, max: 1 })),
  labels: fc.subarray([0, 1, 2]),
  sprint: fc.option(fc.integer({ min: 0, max: 1 })),
  due: fc.option(fc.integer({ min: -3, max: 3 })),
  estimate: fc.option(fc.constantFrom(0, 0.5, 3, 8)),
  word: fc.integer({ min: 0, max: 2 }),
});

/** An expression as a tree: rendered to the language, and evaluated here, independently of the service. */
type Expression =
  | { kind: 'and' | 'or'; left: Expression; right: Expression }
  | { kind: 'not'; item: Expression }
  | { kind: 'condition'; text: string; test: (task: TaskSpec) => boolean };

const ops = <T>(values: fc.Arbitrary<T>) => fc.tuple(fc.constantFrom('=', '!=', 'in', 'not in'), fc.array(values, { minLength: 1, maxLength: 3 }));

function equality<T>(
  field: string,
  values: readonly T[],
  render: (value: T) => string,
  has: (task: TaskSpec, value: T) => boolean,
  empty?: (task: TaskSpec) => boolean,
) {
  const tests = [
    ops(fc.constantFrom(...values)).map(([operator, chosen]): Expression => {
      const list = operator === '=' || operator === '!=' ? chosen.slice(0, 1) : chosen;
      const text =
        operator === 'in' || operator === 'not in'
          ? `${field} ${operator} (${list.map(render).join(', ')})`
          : `${field} ${operator} ${render(list[0])}`;
      const any = (task: TaskSpec) => list.some((value) => has(task, value));
      return { kind: 'condition', text, test: operator === '=' || operator === 'in' ? any : (task) => !any(task) };
    }),
  ];
  if (empty) {
    tests.push(
      fc.boolean().map((negated): Expression => ({
        kind: 'condition',
        text: `${field} is ${negated ? 'not ' : ''}empty`,
        test: (task) => empty(task) !== negated,
      })),
    );
  }
  return fc.oneof(...tests);
}

function ordered(field: string, values: readonly number[], render: (value: number) => string, of: (task: TaskSpec) => number | null) {
  const compare = {
    '<': (a: number, b: number) => a < b,
    '<=': (a: number, b: number) => a <= b,
    '>': (a: number, b: number) => a > b,
    '>=': (a: number, b: number) => a >= b,
  };
  return fc
    .tuple(fc.constantFrom(...(Object.keys(compare) as (keyof typeof compare)[])), fc.constantFrom(...values))
    .map(([operator, value]): Expression => ({
      kind: 'condition',
      text: `${field} ${operator} ${render(value)}`,
      test: (task) => {
        const own = of(task);
        return own !== null && compare[operator](own, value);
      },
    }));
}

const dueText = (offset: number) => (offset === 0 ? 'today' : offset % 2 ? `today${offset > 0 ? '+' : ''}${offset}d` : madridDay(offset));

const condition: fc.Arbitrary<Expression> = fc.oneof(
  equality(
    'status',
    STATUSES,
    (value) => value,
    (task, value) => task.status === value,
  ),
  equality(
    'PRIORITY',
    PRIORITIES,
    (value) => value.toUpperCase(),
    (task, value) => task.priority === value,
  ),
  equality(
    'assignee',
    [0, 1],
    (index) => (index ? `"${MEMBERS[index].toLowerCase()}"` : MEMBERS[index]),
    (task, index) => task.assignee === index,
    (task) => task.assignee === null,
  ),
  equality(
    'label',
    [0, 1, 2],
    (index) => LABELS[index],
    (task, index) => task.labels.includes(index),
    (task) => task.labels.length === 0,
  ),
  equality(
    'sprint',
    [0, 1],
    (index) => (index ? `"${SPRINTS[index]}"` : 'active'),
    (task, index) => task.sprint === index,
    (task) => task.sprint === null,
  ),
  equality(
    'due',
    [-2, 0, 1],
    dueText,
    (task, offset) => task.due === offset,
    (task) => task.due === null,
  ),
  ordered('due', [-2, -1, 0, 1, 2], dueText, (task) => task.due),
  equality(
    'estimate',
    [0, 0.5, 3],
    String,
    (task, points) => task.estimate === points,
    (task) => task.estimate === null,
  ),
  ordered('estimate', [0, 0.5, 3, 8], String, (task) => task.estimate),
  fc.boolean().map((value): Expression => ({ kind: 'condition', text: `estimated = ${value}`, test: (task) => (task.estimate !== null) === value })),
  fc.constantFrom(...WORDS).map((word): Expression => ({
    kind: 'condition',
    text: `title ~ "${word.slice(1, 4)}"`,
    test: (task) => WORDS[task.word].includes(word.slice(1, 4)),
  })),
);

const expression: fc.Arbitrary<Expression> = fc.letrec<{ expression: Expression }>((tie) => ({
  expression: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    condition,
    fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), left: tie('expression'), right: tie('expression') }),
    fc.record({ kind: fc.constant('not' as const), item: tie('expression') }),
  ),
})).expression;

/** The language's text of a tree, with parentheses only where precedence needs them (and binds tighter than or). */
function render(node: Expression): string {
  switch (node.kind) {
    case 'condition':
      return node.text;
    case 'not':
      return `not ${node.item.kind === 'condition' || node.item.kind === 'not' ? render(node.item) : `(${render(node.item)})`}`;
    default: {
      const side = (child: Expression) => (node.kind === 'and' && child.kind === 'or' ? `(${render(child)})` : render(child));
      return `${side(node.left)} ${node.kind} ${side(node.right)}`;
    }
  }
}

function evaluate(node: Expression, task: TaskSpec): boolean {
  switch (node.kind) {
    case 'condition':
      return node.test(task);
    case 'not':
      return !evaluate(node.item, task);
    case 'and':
      return evaluate(node.left, task) && evaluate(node.right, task);
    case 'or':
      return evaluate(node.left, task) || evaluate(node.right, task);
  }
}

describe('filter: random expressions over random tasks agree with an evaluation in the test', () => {
  const t = useTestApp();
  let project: TestProject;
  const tasks: { id: string; spec: TaskSpec }[] = [];

  beforeAll(async () => {
    project = await createProject(t, 'Filter property');
    const sprints: string[] = [];
    for (const name of SPRINTS) sprints.push((await project.api.post('/api/v1/sprints', { name }).expect(201)).body.sprint.id);
    await asAdmin(t).post(`/admin/v1/sprints/${sprints[0]}/activate`).expect(200);
    for (const spec of fc.sample(taskSpec, 16)) {
      const task: TaskJson = await createTask(project, {
        title: `Task about ${WORDS[spec.word]}`,
        status: spec.status,
        priority: spec.priority,
        assigneeId: spec.assignee === null ? null : project.members[spec.assignee].membershipId,
        labelIds: spec.labels.map((index) => project.labels[index].id),
        sprintId: spec.sprint === null ? null : sprints[spec.sprint],
        dueDate: spec.due === null ? null : madridDay(spec.due),
        estimate: spec.estimate,
      });
      tasks.push({ id: task.id, spec });
    }
  });

  it('answers exactly the tasks, and the total, that the expression selects', async () => {
    await fc.assert(
      fc.asyncProperty(expression, async (tree) => {
        const filter = render(tree);
        const res = await project.api.get(`/api/v1/tasks?limit=100&filter=${encodeURIComponent(filter)}`);
        const expected = tasks
          .filter((task) => evaluate(tree, task.spec))
          .map((task) => task.id)
          .sort();
        const got = res.status === 200 ? res.body.tasks.map((task: TaskJson) => task.id).sort() : res.body;
        if (JSON.stringify(got) !== JSON.stringify(expected) || res.body.total !== expected.length) {
          throw new Error(
            `filter ${JSON.stringify(filter)}: the service answered ${res.status} ${JSON.stringify(got)} (total ${res.body.total}), expected ${JSON.stringify(expected)}`,
          );
        }
      }),
      { numRuns: Number(process.env.FILTER_PROPERTY_RUNS ?? 60) },
    );
  });
});
