import { HttpStatus } from '@nestjs/common';
import { Prisma } from '../../generated/prisma/client';
import { Problem } from './problem';

type DatabaseViolation = 'unique' | 'foreign_key' | 'check' | 'write_conflict' | 'record_not_found';

// SQLSTATEs the service answers itself; any other database error is a 500.
const VIOLATION_BY_SQLSTATE: Record<string, DatabaseViolation> = {
  '23505': 'unique',
  '23503': 'foreign_key',
  '23514': 'check',
  '40001': 'write_conflict',
  '40P01': 'write_conflict',
};

const VIOLATION_BY_ADAPTER_KIND: Record<string, DatabaseViolation> = {
  UniqueConstraintViolation: 'unique',
  ForeignKeyConstraintViolation: 'foreign_key',
  TransactionWriteConflict: 'write_conflict',
};

const VIOLATION_BY_PRISMA_CODE: Record<string, DatabaseViolation> = {
  P2002: 'unique',
  P2003: 'foreign_key',
  P2034: 'write_conflict',
  P2025: 'record_not_found',
};

/**
 * What a database error means, whichever layer reports it: Prisma Client (P20xx codes),
 * a driver adapter (DriverAdapterError, whose shape differs between adapter-pg and the
 * PGlite adapter), or the driver itself in a write transaction (SQLSTATE).
 */
export function databaseViolation(error: unknown): DatabaseViolation | null {
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    // A raw query's failure (P2010) carries the driver adapter's error.
    const adapterError = (error.meta as { driverAdapterError?: unknown } | undefined)?.driverAdapterError;
    if (adapterError) return databaseViolation(adapterError);
    const sqlState = (error.meta as { code?: string } | undefined)?.code;
    return VIOLATION_BY_PRISMA_CODE[error.code] ?? (sqlState ? VIOLATION_BY_SQLSTATE[sqlState] : undefined) ?? null;
  }
  // The database's own error, from a write transaction on the driver (pg or PGlite): SQLSTATE in `code`.
  const sqlState = error instanceof Error && 'severity' in error ? (error as { code?: unknown }).code : undefined;
  if (typeof sqlState === 'string') return VIOLATION_BY_SQLSTATE[sqlState] ?? null;
  if (error instanceof Error && error.name === 'DriverAdapterError') {
    const cause = (error as { cause?: { kind?: string; code?: string } }).cause ?? {};
    if (cause.kind === 'postgres' && cause.code) return VIOLATION_BY_SQLSTATE[cause.code] ?? null;
    return (cause.kind && VIOLATION_BY_ADAPTER_KIND[cause.kind]) || null;
  }
  return null;
}

/** Seconds a client is asked to wait (Retry-After) when the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

// What says "the database cannot be reached or used right now", as opposed to "this request
// is wrong", at each layer that may report it.
const UNAVAILABLE_PRISMA_CODES = new Set([
  'P1001', // cannot reach the database server
  'P1002', // reached, but timed out
  'P1008', // operation timed out
  'P1017', // the server closed the connection
  'P2024', // timed out fetching a connection from the pool
  'P2037', // too many connections
]);
const UNAVAILABLE_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
// SQLSTATE class 08 (connection exception); 57P01 to 57P05 (admin shutdown, crash shutdown,
// cannot connect now: starting up or in recovery, database dropped, idle session timeout);
// 53300 too many connections.
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-5]|53300)$/;
// 55000 is a general "object not in prerequisite state"; at connection time it is
// ALTER DATABASE ... ALLOW_CONNECTIONS false.
const NOT_ACCEPTING_CONNECTIONS = /is not currently accepting connections/;
// pg and pg-pool report a lost or unobtainable connection as a plain Error, with no code.
const PG_CONNECTION_FAILURE = /^Connection terminated|timeout exceeded when trying to connect|is not queryable|Cannot use a pool after calling end/;

/** Whether the database is unreachable or refusing work now (503), whichever layer says so, down the `cause` chain. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const pending: unknown[] = [error];
  for (let depth = 0; pending.length > 0 && depth < 10; depth++) {
    const candidate = pending.pop();
    if (!candidate || typeof candidate !== 'object') continue;
    const { code, kind, originalCode, originalMessage, message, cause, meta } = candidate as Record<string, unknown>;
    const text = typeof message === 'string' ? message : typeof originalMessage === 'string' ? originalMessage : '';
    for (const sqlState of [code, originalCode]) {
      if (typeof sqlState !== 'string') continue;
      if (UNAVAILABLE_PRISMA_CODES.has(sqlState) || UNAVAILABLE_SOCKET_CODES.has(sqlState) || UNAVAILABLE_SQLSTATE.test(sqlState)) return true;
      if (sqlState === '55000' && NOT_ACCEPTING_CONNECTIONS.test(text)) return true;
    }
    if (typeof kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(kind)) return true;
    // Only for errors without a code: a database error's message may quote stored values.
    if (code === undefined && kind === undefined && PG_CONNECTION_FAILURE.test(text)) return true;
    pending.push(cause, (meta as { driverAdapterError?: unknown } | undefined)?.driverAdapterError);
  }
  return false;
}

/**
 * The answer for a database error no caller caught, or null for a 500. A constraint violation
 * that reaches here is a rule the validation does not know: a 500, never a 409 inviting a retry.
 */
export function problemFromDatabaseError(error: unknown): Problem | null {
  if (isDatabaseUnavailable(error)) {
    return new Problem(
      HttpStatus.SERVICE_UNAVAILABLE,
      'database_unavailable',
      'The database is unavailable at the moment; retry after the number of seconds in Retry-After',
    );
  }
  switch (databaseViolation(error)) {
    case 'write_conflict':
      return new Problem(HttpStatus.CONFLICT, 'conflict', 'A concurrent change conflicted with this one; retry the request');
    case 'record_not_found':
      return new Problem(HttpStatus.NOT_FOUND, 'not_found', 'Not found');
    default:
      return null;
  }
}

// Prisma Client's codes for integrity constraint violations, as SQLSTATEs.
const SQLSTATE_BY_PRISMA_CODE: Record<string, string> = { P2002: '23505', P2003: '23503', P2004: '23514', P2011: '23502' };

/**
 * The integrity constraint (SQLSTATE class 23: a CHECK, unique, foreign key, NOT NULL or
 * exclusion constraint) that refused a statement, whichever layer reports it: its SQLSTATE and
 * its name (null when no layer says it). Null for any other error.
 */
export function violatedConstraint(error: unknown): { sqlState: string; constraint: string | null } | null {
  let sqlState: string | null = null;
  let constraint: string | null = null;
  const pending: unknown[] = [error];
  for (let depth = 0; pending.length > 0 && depth < 10; depth++) {
    const candidate = pending.pop();
    if (!candidate || typeof candidate !== 'object') continue;
    const fields = candidate as Record<string, unknown>;
    for (const code of [fields.code, fields.originalCode]) {
      if (typeof code !== 'string') continue;
      const state = /^23[0-9A-Z]{3}$/.test(code) ? code : SQLSTATE_BY_PRISMA_CODE[code];
      if (state) sqlState ??= state;
    }
    if (typeof fields.constraint === 'string') constraint ??= fields.constraint;
    for (const message of [fields.message, fields.originalMessage]) {
      const named = typeof message === 'string' ? /constraint "([^"]+)"/.exec(message) : null;
      if (named) constraint ??= named[1];
    }
    pending.push(fields.cause, (fields.meta as { driverAdapterError?: unknown } | undefined)?.driverAdapterError);
  }
  return sqlState ? { sqlState, constraint } : null;
}

/** Whether `error` is the violation of the constraint `name`: what a caller that foresaw it translates, and nothing else. */
export function violates(error: unknown, name: string): boolean {
  return violatedConstraint(error)?.constraint === name;
}
