import { ApiHideProperty, ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { IsCalendarDate, IsNotBlank, IsText, ReadOnlyField } from '../common/validation/validators';
import { SPRINT_STATUSES } from '../tasks/task-fields';

export class CreateSprintDto {
  /** 1 to 100 characters, not only white space. */
  @IsString()
  @IsText(1, 100)
  @IsNotBlank()
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Sprint 12' })
  name: string;

  /** Up to 1000 characters. */
  @IsOptional()
  @IsString()
  @IsText(0, 1000)
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 1000, example: 'Ship the release candidate' })
  goal?: string | null;

  /** YYYY-MM-DD, a civil day in Madrid. */
  @IsOptional()
  @IsCalendarDate()
  @ApiPropertyOptional({ type: String, format: 'date', nullable: true, example: '2026-12-01' })
  startDate?: string | null;

  /** YYYY-MM-DD, on or after startDate. */
  @IsOptional()
  @IsCalendarDate()
  @ApiPropertyOptional({ type: String, format: 'date', nullable: true, example: '2026-12-14' })
  endDate?: string | null;

  /** Read-only: sprints are activated and closed in the app. Sending it is 400 read_only_field. */
  @ApiHideProperty()
  @ReadOnlyField()
  status?: never;
}

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
  @ApiProperty({ format: 'uuid' })
  id: string;
  name: string;
  @ApiProperty({ type: String, nullable: true })
  goal: string | null;
  @ApiProperty({ enum: SPRINT_STATUSES, description: 'Read-only: planned at creation; activated and closed in the app' })
  status: string;
  @ApiProperty({ type: String, format: 'date', nullable: true })
  startDate: string | null;
  @ApiProperty({ type: String, format: 'date', nullable: true })
  endDate: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
}

export class SprintResponseDto {
  sprint: SprintDto;
}

export class SprintListDto {
  /** Newest first. */
  sprints: SprintDto[];
}
