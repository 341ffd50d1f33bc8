import { ApiHideProperty, ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { requireFieldDecorators, SameKeys, ShownField, shownFields, WritableField } from '../common/fields/fields';
import { SPRINT_STATUS_READ_ONLY } from '../admin/admin-interface';
import { ReadOnlyField } from '../common/validation/validators';
import type { SprintStatus } from '../generated/prisma/enums';
import { SPRINT_FIELDS, SPRINT_WRITABLE, SprintAnswerField, SprintBodyField, SprintFields } from './sprint-fields';

export class CreateSprintDto {
  /** 1 to 100 characters, not only white space. */
  @SprintBodyField()
  @ApiProperty({ example: 'Sprint 12' })
  name: string;

  /** Up to 1000 characters. */
  @SprintBodyField()
  @ApiPropertyOptional({ example: 'Ship the release candidate' })
  goal?: string | null;

  /** YYYY-MM-DD, a civil day in Madrid. */
  @SprintBodyField()
  @ApiPropertyOptional({ example: '2026-12-01' })
  startDate?: string | null;

  /** YYYY-MM-DD, on or after startDate. */
  @SprintBodyField()
  @ApiPropertyOptional({ example: '2026-12-14' })
  endDate?: string | null;

  /** Read-only: sprints are activated and closed in the app. Sending it is 400 read_only_field naming the admin routes that do. */
  @ApiHideProperty()
  @ReadOnlyField(SPRINT_STATUS_READ_ONLY)
  status?: never;
}

// The body fields are exactly SPRINT_FIELDS' written ones (and the read-only status), with their types.
const _createSprintBodyHasEveryField: SameKeys<keyof CreateSprintDto, WritableField<typeof SPRINT_FIELDS> | 'status'> = true;
const _createSprintBodyTypes: Required<Omit<CreateSprintDto, 'status'>> extends SprintFields ? true : false = true;

/** Name, goal and window; null clears goal and dates. The window is checked on the resulting values. */
export class UpdateSprintDto extends PartialType(CreateSprintDto, { skipNullProperties: false }) {}

/** Request examples in the OpenAPI document, valid as they are. */
export const CREATE_SPRINT_EXAMPLE: CreateSprintDto = {
  name: 'Sprint 12',
  goal: 'Ship the release candidate',
  startDate: '2026-12-01',
  endDate: '2026-12-14',
};
export const UPDATE_SPRINT_EXAMPLE: UpdateSprintDto = { goal: 'Ship the release candidate and its notes' };

export class CloseSprintDto {
  /** A planned sprint of the project for the open tasks; null or absent: no sprint (backlog). */
  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true })
  moveOpenTasksTo?: string | null;
}

export class SprintDto {
  @SprintAnswerField()
  id: string;
  @SprintAnswerField()
  name: string;
  @SprintAnswerField()
  goal: string | null;
  /** Read-only: planned at creation; activated and closed in the app. */
  @SprintAnswerField()
  status: SprintStatus;
  @SprintAnswerField()
  startDate: string | null;
  @SprintAnswerField()
  endDate: string | null;
  @SprintAnswerField()
  createdAt: string;
}

// Answers show exactly SPRINT_FIELDS' shown fields (sprint-view.sql.ts builds them from the table).
const _sprintAnswerHasEveryField: SameKeys<keyof SprintDto, ShownField<typeof SPRINT_FIELDS, 'list'>> = true;
// And each property carries its row's validation and OpenAPI property (fails at start otherwise).
requireFieldDecorators(CreateSprintDto, SprintBodyField, SPRINT_WRITABLE.all, 'SPRINT_FIELDS says clients write it');
requireFieldDecorators(SprintDto, SprintAnswerField, shownFields(SPRINT_FIELDS, 'list'), 'SPRINT_FIELDS shows it');

export class SprintResponseDto {
  sprint: SprintDto;
}

export class SprintListDto {
  /** Newest first. */
  sprints: SprintDto[];
}
