import { ApiProperty } from '@nestjs/swagger';

/**
 * A field's value in history and in `task.updated` events, as the API writes that field: a JSON
 * scalar (text, ids, dates, statuses, numbers), a list of ids (labelIds), or null. Typed once
 * here for every field, so that a new field needs no edit of it.
 */
export type FieldValueDto = string | number | boolean | string[] | null;
const FIELD_VALUE = {
  oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'array', items: { type: 'string' } }],
  nullable: true,
};

export class FieldChangeDto {
  /** The API's name of the field: status, assigneeId, labelIds, sprintId, dueDate, ... */
  field: string;
  @ApiProperty({ ...FIELD_VALUE, description: 'Value before the change, as the API writes it' })
  from: FieldValueDto;
  @ApiProperty({ ...FIELD_VALUE, description: 'Value after the change, as the API writes it' })
  to: FieldValueDto;
}

export class HistoryEntryDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
  /** "<key name> (API)" for changes made with a key, "App" for the product's app. */
  actor: string;
  @ApiProperty({ enum: ['created', 'updated', 'deleted', 'restored', 'dependency_added', 'dependency_removed'] })
  action: string;
  changes: FieldChangeDto[];
}

export class HistoryPageDto {
  /** Newest first. */
  history: HistoryEntryDto[];
  @ApiProperty({ type: String, nullable: true, description: 'null on the last page' })
  nextCursor: string | null;
}
