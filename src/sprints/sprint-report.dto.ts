import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { digitsToNumber } from '../common/validation/validators';
import { SPRINT_STATUSES, TASK_STATUSES } from '../tasks/task-fields';

/** A number of tasks and their points (decisions.md section 19): null estimates count 0 points and are counted in `unestimated`. */
export class TallyDto {
  @ApiProperty({ type: 'integer', minimum: 0 })
  tasks: number;
  points: number;
  @ApiProperty({ type: 'integer', minimum: 0 })
  unestimated: number;
}

/** A task a report counts, as it is at the close (or now). */
export class ReportTaskDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  title: string;
  /** In the scope at activation. */
  committed: boolean;
  /** Entered the scope after activation, not committed. */
  added: boolean;
  /** Left the scope after activation and is not back at the close (or now). */
  removed: boolean;
  /** An open task the close moved out of the sprint. */
  carriedOver: boolean;
  @ApiProperty({ enum: TASK_STATUSES })
  status: string;
  @ApiProperty({ type: Number, nullable: true })
  estimate: number | null;
}

/**
 * What a sprint committed to and delivered (decisions.md section 19). Frozen at the close: a closed
 * sprint's report never changes. A planned sprint's has only `scope` and `tasks`.
 */
export class SprintReportDto {
  @ApiProperty({ format: 'uuid' })
  sprintId: string;
  @ApiProperty({ enum: SPRINT_STATUSES })
  status: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  activatedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  closedAt: string | null;
  /** The scope at activation, each task's estimate at that instant. */
  @ApiProperty({ type: TallyDto, nullable: true })
  committed: TallyDto | null;
  /** Tasks that entered the scope after activation and were not committed, estimates when they (last) entered. */
  @ApiProperty({ type: TallyDto, nullable: true })
  added: TallyDto | null;
  /** Tasks in the scope after activation that left it and are not back, estimates when they left. */
  @ApiProperty({ type: TallyDto, nullable: true })
  removed: TallyDto | null;
  /** Points: the sum of the estimate changes of tasks while in the scope after activation. */
  @ApiProperty({ type: Number, nullable: true })
  reestimated: number | null;
  /** Tasks in the scope at the close (or now) that are done. */
  @ApiProperty({ type: TallyDto, nullable: true })
  completed: TallyDto | null;
  /** Tasks in the scope at the close (or now) that are cancelled. */
  @ApiProperty({ type: TallyDto, nullable: true })
  cancelled: TallyDto | null;
  /** The open tasks the close moved out; null until closed. */
  @ApiProperty({ type: TallyDto, nullable: true })
  carriedOver: TallyDto | null;
  /** The scope at the close, before the open tasks moved out (or now). */
  scope: TallyDto;
  /** Every task counted above, ordered by rank. */
  tasks: ReportTaskDto[];
}

/** What sprint.activated carries: the scope committed at activation. */
export class SprintCommitmentDto {
  committed: TallyDto;
}

export class SprintReportResponseDto {
  report: SprintReportDto;
}

export class BurndownDayDto {
  /** A Madrid calendar day, YYYY-MM-DD. */
  @ApiProperty({ type: String, format: 'date' })
  date: string;
  /** The scope at the end of that day (today: now; the close day: at the close, before its open tasks moved out); null on a day ahead. */
  @ApiProperty({ type: TallyDto, nullable: true })
  scope: TallyDto | null;
  /** Tasks of the scope that are done; null on a day ahead. */
  @ApiProperty({ type: TallyDto, nullable: true })
  completed: TallyDto | null;
  /** Tasks of the scope that are cancelled; null on a day ahead. */
  @ApiProperty({ type: TallyDto, nullable: true })
  cancelled: TallyDto | null;
  /** The scope minus what is completed and what is cancelled (finished work is not remaining); null on a day ahead. */
  @ApiProperty({ type: TallyDto, nullable: true })
  remaining: TallyDto | null;
  /**
   * Points on the ideal line: from the committed points on startDate to 0 on endDate, rounded to
   * one decimal; null outside that window, or when the sprint lacks a startDate or an endDate.
   */
  @ApiProperty({ type: Number, nullable: true })
  ideal: number | null;
}

export class BurndownDto {
  /**
   * From the activation day to the close day (or today), oldest first; for an active sprint, then
   * the days after today up to its endDate, with null tallies. A closed sprint's is frozen.
   */
  days: BurndownDayDto[];
}

export class VelocityQueryDto {
  /** How many of the last closed sprints, 1 to 50. */
  @IsOptional()
  @Transform(digitsToNumber)
  @IsInt({ message: 'must be an integer from 1 to 50' })
  @Min(1, { message: 'must be an integer from 1 to 50' })
  @Max(50, { message: 'must be an integer from 1 to 50' })
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 50, default: 6 })
  last?: number;
}

export class VelocitySprintDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  name: string;
  @ApiProperty({ type: String, format: 'date-time' })
  closedAt: string;
  committed: TallyDto;
  completed: TallyDto;
}

export class VelocityAverageDto {
  /** The mean of their completed tasks, not rounded. */
  tasks: number;
  /** The mean of their completed points, not rounded. */
  points: number;
}

export class VelocityDto {
  /** Most recently closed first. */
  sprints: VelocitySprintDto[];
  average: VelocityAverageDto;
}
