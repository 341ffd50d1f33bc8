/**
 * Ids are opaque to clients but UUIDs in the database: anything that is not a UUID
 * cannot name a record, so it is simply "not found" (never a database error).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
