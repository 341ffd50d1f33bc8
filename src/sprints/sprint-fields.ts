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
 * validation and OpenAPI properties of its DTOs. `status` is read-only: the app changes it.
 */
export const SPRINT_FIELDS = {
  id: { column: 'id', kind: id(), shown: 'list' },
  projectId: { column: 'project_id', kind: id() },
  name: { column: 'name', kind: text(1, 100, { notBlank: true }), write: {}, shown: 'list' },
  goal: { column: 'goal', kind: text(0, 1000), nullable: true, write: { default: null }, shown: 'list' },
  status: { column: 'status', kind: oneOf(Object.values(SprintStatus), 'sprint_status'), shown: 'list' },
  startDate: { column: 'start_date', kind: calendarDate(), nullable: true, write: { default: null }, shown: 'list' },
  endDate: { column: 'end_date', kind: calendarDate(), nullable: true, write: { default: null }, shown: 'list' },
  createdAt: { column: 'created_at', kind: instant(), shown: 'list' },
  updatedAt: { column: 'updated_at', kind: instant() },
  // Shown by the sprint's report and velocity (src/sprints/sprint-ledger.sql.ts), written by the app's activation and close.
  activatedAt: { column: 'activated_at', kind: instant(), nullable: true },
  closedAt: { column: 'closed_at', kind: instant(), nullable: true },
  report: { column: 'report', kind: json(), nullable: true },
  closedTallies: { column: 'closed_tallies', kind: json(), nullable: true },
} as const satisfies TableOf<Sprint>;

/** The SQL derived from SPRINT_FIELDS, on the sprint row `s`. */
export const SPRINT_SQL = fieldSql(SPRINT_FIELDS, 's');

export const SPRINT_WRITABLE = writableFields(SPRINT_FIELDS);

/** A sprint's editable fields, as the API names and writes them. */
export type SprintFields = FieldValues<typeof SPRINT_FIELDS, PatchableField<typeof SPRINT_FIELDS>>;

/** On a request DTO's property: the validation and OpenAPI property of its SPRINT_FIELDS row. */
export const SprintBodyField = fieldDecorator(SPRINT_FIELDS, bodyField);

/** On an answer DTO's property: the OpenAPI property of its SPRINT_FIELDS row. */
export const SprintAnswerField = fieldDecorator(SPRINT_FIELDS, shownField);
