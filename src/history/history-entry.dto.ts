import { ApiProperty } from '@nestjs/swagger';

/** A field's value as the API writes it: a string (ids, dates, statuses, text), a list of ids (labelIds), or null. */
const FIELD_VALUE = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], nullable: true };

export class FieldChangeDto {
  /** The API's name of the field: status, assigneeId, labelIds, sprintId, dueDate, ... */
  field: string;
  @ApiProperty({ ...FIELD_VALUE, description: 'Value before the change, as the API writes it' })
  from: string | string[] | null;
  @ApiProperty({ ...FIELD_VALUE, description: 'Value after the change, as the API writes it' })
  to: string | string[] | null;
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
