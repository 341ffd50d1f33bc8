/**
 * Calendar days (YYYY-MM-DD, a civil day in Europe/Madrid) and instants (UTC with
 * milliseconds) as the contract writes them. A calendar day is stored as a DATE and
 * travels through JavaScript as a Date at UTC midnight, so no time zone can shift it.
 */

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

export function isCalendarDate(value: string): boolean {
  const match = CALENDAR_DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // Year 0 does not exist in PostgreSQL's calendar (1 BC comes before AD 1).
  if (year === 0) return false;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // Date.UTC would read years 0-99 as 1900-1999
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export function isInstant(value: string): boolean {
  if (!INSTANT.test(value) || Number.isNaN(Date.parse(value))) return false;
  // Date.parse rolls 2026-02-30 over to March; the day itself must exist.
  return isCalendarDate(value.slice(0, 10));
}

/** YYYY-MM-DD to the Date Prisma stores in a DATE column. */
export function calendarDateToDate(value: string): Date {
  return new Date(`${value}T00:00:00.000Z`);
}

/** A DATE column's value back to YYYY-MM-DD. */
export function formatCalendarDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Today as a calendar day in Madrid (the contract's civil days). */
export function madridToday(): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Madrid' }).format(new Date());
}

/** The calendar day `days` after `day` (before, when negative). */
export function addDays(day: string, days: number): string {
  const date = calendarDateToDate(day);
  date.setUTCDate(date.getUTCDate() + days);
  return formatCalendarDate(date);
}

/** SQL that writes a timestamptz `column` as the contract writes instants: UTC with milliseconds and Z. */
export function isoTimestamp(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
