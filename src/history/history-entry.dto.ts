import { ApiProperty } from '@nestjs/swagger';

export class FieldChangeDto {
  /** The API's name of the field: status, assigneeId, labelIds, sprintId, dueDate, ... */
  field: string;
  @ApiProperty({ nullable: true, description: 'Value before the change, as the API writes it' })
  from: unknown;
  @ApiProperty({ nullable: true, description: 'Value after the change, as the API writes it' })
  to: unknown;
}

export class HistoryEntryDto {
  id: string;
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
