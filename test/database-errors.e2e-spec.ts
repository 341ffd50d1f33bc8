import { isDatabaseUnavailable, problemFromDatabaseError } from '../src/common/errors/database-errors';
import { Prisma } from '../src/generated/prisma/client';
import { asAdmin, createTask, useProject } from './support/fixtures';
import { atOnce, listen, raceClient } from './support/races';
import { ADMIN_TOKEN, engine, useTestApp } from './support/test-app';

// The errors as each layer reports them (shapes read from pg, pg-pool, @prisma/adapter-pg and
// Prisma Client 6.19); database-outage.e2e-spec.ts produces the common ones for real on PostgreSQL.
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });
const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: 'connect' });
const adapterError = (cause: object) => Object.assign(new Error('driver adapter error'), { name: 'DriverAdapterError', cause });
const prismaError = (code: string, meta?: Record<string, unknown>) =>
  new Prisma.PrismaClientKnownRequestError('Invalid invocation', { code, clientVersion: '6.19.3', meta });

describe('database errors that mean "unavailable" (503 database_unavailable)', () => {
  it.each([
    ['a pool that cannot get a connection in time (pg-pool)', new Error('timeout exceeded when trying to connect')],
    ['a connection lost mid-query (pg)', new Error('Connection terminated unexpectedly')],
    ['a client used after its connection failed (pg)', new Error('Client has encountered a connection error and is not queryable')],
    ['connection refused (socket)', socketError('ECONNREFUSED')],
    ['connection reset (socket)', socketError('ECONNRESET')],
    ['admin shutdown, 57P01 (pg)', pgError('57P01', 'terminating connection due to administrator command')],
    ['cannot connect now, 57P03: starting up (pg)', pgError('57P03', 'the database system is starting up')],
    ['a connection exception, class 08 (pg)', pgError('08006', 'connection failure')],
    ['too many connections, 53300 (pg)', pgError('53300', 'sorry, too many clients already')],
    ['a database refusing connections, 55000 (pg)', pgError('55000', 'database "tasks" is not currently accepting connections')],
    ['DatabaseNotReachable (adapter-pg)', adapterError({ kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 })],
    ['ConnectionClosed (adapter-pg)', adapterError({ kind: 'ConnectionClosed' })],
    ['a SQLSTATE behind the adapter', adapterError({ kind: 'postgres', code: '57P01', severity: 'FATAL', message: 'terminating connection' })],
    ['P1001, cannot reach the server (Prisma)', prismaError('P1001')],
    ['P1017, the server closed the connection (Prisma)', prismaError('P1017')],
    [
      'P2010 raw query failed with 57P01 (Prisma)',
      prismaError('P2010', {
        driverAdapterError: adapterError({ kind: 'postgres', originalCode: '57P01', originalMessage: 'terminating connection' }),
      }),
    ],
  ])('recognises %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(problemFromDatabaseError(error)).toMatchObject({ code: 'database_unavailable', detail: expect.stringMatching(/Retry-After/) });
    expect(problemFromDatabaseError(error)!.getStatus()).toBe(503);
  });

  it.each([
    ['a unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
    [
      'a unique violation quoting a stored value that reads like a lost connection',
      pgError('23505', 'Key (title)=(Connection terminated unexpectedly) exists'),
    ],
    ['another 55000', pgError('55000', 'cannot execute this in the current state')],
    ['a syntax error', pgError('42601', 'syntax error at or near "SELEC"')],
    ['a record not found (Prisma)', prismaError('P2025')],
    ['any other error', new Error('boom')],
    ['not an error at all', 'boom'],
  ])('does not take %s for an outage', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('a database constraint the validation did not foresee (a defect)', () => {
  /** What the service logs, line by line (a pino destination). */
  const lines: Record<string, unknown>[] = [];
  const log = {
    write: (chunk: string) =>
      void lines.push(
        ...chunk
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      ),
  };
  const linesOf = (requestId: string) => lines.filter((line) => line.requestId === requestId);
  const t = useTestApp({ logLevel: 'error' }, { logDestination: log });
  const project = useProject(t);
  beforeAll(async () => {
    // Rules no validation knows of: what a migration would add without its field's kind.
    await t.prisma.$executeRawUnsafe(`ALTER TABLE tasks ADD CONSTRAINT tasks_title_unforeseen CHECK (title <> 'Refused by the database')`);
    await t.prisma.$executeRawUnsafe(`CREATE UNIQUE INDEX labels_color_unforeseen ON labels (project_id, color)`);
  });

  const internal = {
    type: 'about:blank',
    title: 'Internal Server Error',
    status: 500,
    detail: 'An unexpected error occurred; it has been logged',
    code: 'internal',
  };

  it.each([
    ['a create', 'check-create', () => project.api.post('/api/v1/tasks', { title: 'Refused by the database' })],
    ['a PATCH', 'check-patch', (taskId: string) => project.api.patch(`/api/v1/tasks/${taskId}`, { title: 'Refused by the database' })],
    [
      'a bulk create',
      'check-bulk',
      () => project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: 'Fine' }, { title: 'Refused by the database' }] }),
    ],
  ])(
    'answers %s refused by a CHECK with 500 internal, never a 409 that invites a retry; logs the constraint’s name at error level',
    async (_what, requestId, send) => {
      const { id } = await createTask(project);
      const res = await send(id).set('X-Request-Id', requestId).expect(500);
      expect(res.body).toEqual(internal);
      expect(linesOf(requestId)).toContainEqual(
        expect.objectContaining({
          level: 'error',
          msg: expect.stringMatching(/^Defect: the database constraint tasks_title_unforeseen \(SQLSTATE 23514\)/),
        }),
      );
      expect(linesOf(requestId)).toContainEqual(expect.objectContaining({ level: 'error', status: 500, err: expect.any(Object) }));
      expect(await t.prisma.task.count({ where: { title: 'Refused by the database' } })).toBe(0);
    },
  );

  it('answers a unique index that no caller foresaw with 500 internal too, naming it in the log; a label name taken is still 409 (foreseen)', async () => {
    const labels = `/admin/v1/projects/${project.id}/labels`;
    const res = await asAdmin(t)
      .post(labels, { name: 'same colour', color: project.labels[0].color })
      .set('X-Request-Id', 'unique-color')
      .expect(500);
    expect(res.body).toEqual(internal);
    expect(linesOf('unique-color')).toContainEqual(
      expect.objectContaining({ level: 'error', msg: expect.stringContaining('constraint labels_color_unforeseen (SQLSTATE 23505)') }),
    );
    const taken = await asAdmin(t).post(labels, { name: project.labels[0].name, color: '#123456' }).expect(409);
    expect(taken.body).toMatchObject({ code: 'conflict', detail: 'The project has a label of that name' });
  });

  // Two transactions side by side: PGlite runs one at a time, so there the second always sees the first.
  (engine === 'postgresql' ? it : it.skip)(
    'answers two activations at once 200 and 409 naming the winner (the one-active index, foreseen), never 500',
    async () => {
      const admin = raceClient(await listen(t), ADMIN_TOKEN);
      for (let round = 0; round < 20; round++) {
        const [a, b] = [0, 1].map(
          async () => (await project.api.post('/api/v1/sprints', { name: `Round ${round}` }).expect(201)).body.sprint.id as string,
        );
        const ids = await Promise.all([a, b]);
        const answers = await atOnce(...ids.map((id) => () => admin.post(`/admin/v1/sprints/${id}/activate`)));
        expect(answers.map((answer) => [answer.status, answer.body.code ?? null]).sort()).toEqual([
          [200, null],
          [409, 'conflict'],
        ]);
        const active = ids[answers.findIndex((answer) => answer.status === 200)];
        // The loser names the sprint that won, whether its own check or the index refused it (decisions.md section 26).
        expect(answers.find((answer) => answer.status === 409)!.body.activeSprintId).toBe(active);
        expect((await admin.post(`/admin/v1/sprints/${active}/close`, {})).status).toBe(200);
      }
    },
  );
});
