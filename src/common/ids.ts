/**
 * Ids are opaque to clients but UUIDs in the database: anything that is not a UUID
 * cannot name a record, so it is simply "not found" (never a database error). Only the
 * lower-case spelling the service issues is an id: PostgreSQL would also find a record by
 * its upper-case spelling, and then the same id would compare unequal to itself in history,
 * label sets and the self-dependency check.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Route parameters named `...Id` (`taskId`, `blockedById`) are ids: PathIdPipe reads them, the OpenAPI document says so. */
export function isIdParameter(name: string): boolean {
  return name.endsWith('Id');
}

/**
 * The nil UUID: what a path id that is not a UUID becomes (PathIdPipe). The service issues random
 * (version 4) UUIDs only, so it names nothing, in every table.
 */
export const NO_ID = '00000000-0000-0000-0000-000000000000';
