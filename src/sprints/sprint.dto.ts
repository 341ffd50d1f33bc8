import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { IsCalendarDate, IsNotBlank, IsText, ReadOnlyField } from '../common/validation/validators';
import { SPRINT_STATUSES } from '../tasks/task-fields';

export class CreateSprintDto {
  /** 1 to 100 characters, not only white space. */
  @IsString()
  @IsText(1, 100)
  @IsNotBlank()
  name: string;

  /** Up to 1000 characters. */
  @IsOptional()
  @IsString()
  @IsText(0, 1000)
  goal?: string | null;

  /** YYYY-MM-DD, a civil day in Madrid. */
  @IsOptional()
  @IsCalendarDate()
  @ApiProperty({ type: String, format: 'date', nullable: true, required: false })
  startDate?: string | null;

  /** YYYY-MM-DD, on or after startDate. */
  @IsOptional()
  @IsCalendarDate()
  @ApiProperty({ type: String, format: 'date', nullable: true, required: false })
  endDate?: string | null;

  /** Read-only: sprints are activated and closed in the app. Sending it is 400 read_only_field. */
  @ApiHideProperty()
  @ReadOnlyField()
  status?: never;
}

/** Name, goal and window; null clears goal and dates. The window is checked on the resulting values. */
export class UpdateSprintDto extends PartialType(CreateSprintDto, { skipNullProperties: false }) {}

export class CloseSprintDto {
  /** A planned sprint of the project for the open tasks; null or absent: no sprint (backlog). */
  @IsOptional()
  @IsString()
  moveOpenTasksTo?: string | null;
}

export class SprintDto {
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
