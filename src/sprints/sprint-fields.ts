import {
  bodyField,
  calendarDate,
  fieldDecorator,
  fieldSql,
  FieldValues,
  id,
  instant,
  json,
  oneOf,
  PatchableField,
  shownField,
  TableOf,
  text,
  writableFields,
} from '../common/fields/fields';
import type { Sprint } from '../generated/prisma/client';
import { SprintStatus } from '../generated/prisma/enums';

/**
 * A sprint's fields, described once: one row per column of `sprints` (schema.prisma; TableOf
 * fails the build when a column has no row). From it come the sprint's JSON view
 * (sprint-view.sql.ts), the insert and update of its fields, their TypeScript shape and the
 * validation and OpenAPI properties of its DTOs. Every row says who writes it and where answers
 * show it (or why not).
 */
export const SPRINT_FIELDS = {
  id: { column: 'id', kind: id(), write: 'service', shown: 'list' },
  projectId: { column: 'project_id', kind: id(), write: 'service', shown: { not: 'a sprint answer is always of the caller’s project' } },
  name: { column: 'name', kind: text(1, 100, { notBlank: true }), write: {}, shown: 'list' },
  goal: { column: 'goal', kind: text(0, 1000), nullable: true, write: { default: null }, shown: 'list' },
  // Read-only: the app activates and closes sprints.
  status: { column: 'status', kind: oneOf(Object.values(SprintStatus), 'sprint_status'), write: 'service', shown: 'list' },
  startDate: { column: 'start_date', kind: calendarDate(), nullable: true, write: { default: null }, shown: 'list' },
  endDate: { column: 'end_date', kind: calendarDate(), nullable: true, write: { default: null }, shown: 'list' },
  createdAt: { column: 'created_at', kind: instant(), write: 'service', shown: 'list' },
  updatedAt: { column: 'updated_at', kind: instant(), write: 'service', shown: { not: 'the interface specification’s sprint has no updatedAt' } },
  activatedAt: {
    column: 'activated_at',
    kind: instant(),
    nullable: true,
    write: 'service',
    shown: { not: 'shown by the report and velocity (sprint-ledger.sql.ts)' },
  },
  closedAt: {
    column: 'closed_at',
    kind: instant(),
    nullable: true,
    write: 'service',
    shown: { not: 'shown by the report and velocity (sprint-ledger.sql.ts)' },
  },
  report: {
    column: 'report',
    kind: json(),
    nullable: true,
    write: 'service',
    shown: { not: 'the report frozen at close, answered by GET .../report' },
  },
  closedTallies: {
    column: 'closed_tallies',
    kind: json(),
    nullable: true,
    write: 'service',
    shown: { not: 'tallies velocity reads (sprint-ledger.sql.ts)' },
  },
  closedStartDate: {
    column: 'closed_start_date',
    kind: calendarDate(),
    nullable: true,
    write: 'service',
    shown: { not: 'the window at the close, on which the frozen burndown draws its ideal line (sprint-ledger.sql.ts)' },
  },
  closedEndDate: {
    column: 'closed_end_date',
    kind: calendarDate(),
    nullable: true,
    write: 'service',
    shown: { not: 'the window at the close, on which the frozen burndown draws its ideal line (sprint-ledger.sql.ts)' },
  },
} as const satisfies TableOf<Sprint>;

/** The SQL derived from SPRINT_FIELDS, on the sprint row `s`. */
export const SPRINT_SQL = fieldSql(SPRINT_FIELDS, 's');

export const SPRINT_WRITABLE = writableFields(SPRINT_FIELDS);

/** A sprint's editable fields, as the API names and writes them. */
export type SprintFields = FieldValues<typeof SPRINT_FIELDS, PatchableField<typeof SPRINT_FIELDS>>;

/** On a request DTO's property: the validation and OpenAPI property of its SPRINT_FIELDS row. */
export const SprintBodyField = fieldDecorator(SPRINT_FIELDS, bodyField, 'SprintBodyField');

/** On an answer DTO's property: the OpenAPI property of its SPRINT_FIELDS row. */
export const SprintAnswerField = fieldDecorator(SPRINT_FIELDS, shownField, 'SprintAnswerField');
