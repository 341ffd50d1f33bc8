import { isDatabaseUnavailable, problemFromDatabaseError } from '../src/common/errors/database-errors';
import { Prisma } from '../src/generated/prisma/client';

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
