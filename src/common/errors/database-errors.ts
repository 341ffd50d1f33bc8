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
 * PGlite adapter), or a raw query (SQLSTATE).
 */
export function databaseViolation(error: unknown): DatabaseViolation | null {
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    // A raw query's error (P2010) carries the SQLSTATE as `meta.code`, or, through adapter-pg,
    // as the cause of `meta.driverAdapterError`.
    const meta = error.meta as { code?: string; driverAdapterError?: { cause?: { originalCode?: string; kind?: string } } } | undefined;
    const cause = meta?.driverAdapterError?.cause;
    const sqlState = meta?.code ?? cause?.originalCode;
    return (
      VIOLATION_BY_PRISMA_CODE[error.code] ??
      (sqlState ? VIOLATION_BY_SQLSTATE[sqlState] : undefined) ??
      (cause?.kind ? VIOLATION_BY_ADAPTER_KIND[cause.kind] : undefined) ??
      null
    );
  }
  if (error instanceof Error && error.name === 'DriverAdapterError') {
    const cause = (error as { cause?: { kind?: string; code?: string } }).cause ?? {};
    if (cause.kind === 'postgres' && cause.code) return VIOLATION_BY_SQLSTATE[cause.code] ?? null;
    return (cause.kind && VIOLATION_BY_ADAPTER_KIND[cause.kind]) || null;
  }
  return null;
}

/** The answer for a database error the service did not catch itself, or null for a 500. */
export function problemFromDatabaseError(error: unknown): Problem | null {
  switch (databaseViolation(error)) {
    case 'unique':
      return new Problem(HttpStatus.CONFLICT, 'conflict', 'A record with these values already exists');
    case 'foreign_key':
    case 'check':
      return new Problem(HttpStatus.CONFLICT, 'conflict', 'The change conflicts with the current state of related records; retry the request');
    case 'write_conflict':
      return new Problem(HttpStatus.CONFLICT, 'conflict', 'A concurrent change conflicted with this one; retry the request');
    case 'record_not_found':
      return new Problem(HttpStatus.NOT_FOUND, 'not_found', 'Not found');
    default:
      return null;
  }
}
