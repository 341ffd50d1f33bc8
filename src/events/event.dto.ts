import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath, PickType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { EVENT_TYPES } from '../changes/change';
import { CommentDto, DeletedCommentDto } from '../comments/comment.dto';
import { AttachmentEventDto, DeletedAttachmentDto } from '../attachments/attachment.dto';
import { digitsToNumber, IsCommaSeparatedListOf } from '../common/validation/validators';
import { ProblemDto } from '../common/errors/problem.dto';
import { FieldChangeDto } from '../history/history-entry.dto';
import { LabelDto, MemberDto } from '../projects/project-resources.dto';
import { SprintCommitmentDto, SprintReportDto } from '../sprints/sprint-report.dto';
import { SprintDto } from '../sprints/sprint.dto';
import { TaskDetailDto } from '../tasks/task.dto';
import { TrashedTaskDto } from '../trash/trash.dto';

/** What is left of a destroyed task or sprint in its event: its id alone. */
const ID_ONLY = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
};

/** A position in the feed: a sequence number, from 0. */
function SequenceNumber(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    Transform(digitsToNumber),
    IsInt({ message: 'must be an integer from 0' }),
    Min(0, { message: 'must be an integer from 0' }),
    Max(Number.MAX_SAFE_INTEGER, { message: 'must be an integer from 0' }),
    ApiProperty({ required: false, type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  );
}

export class EventFeedQueryDto {
  /** Events after this sequence number; 0 (the default) reads from the first event. At most the last sequence (else 400). */
  @SequenceNumber()
  after?: number;

  /** At most this many events, 1 to 1000. */
  @IsOptional()
  @Transform(digitsToNumber)
  @IsInt({ message: 'must be an integer from 1 to 1000' })
  @Min(1, { message: 'must be an integer from 1 to 1000' })
  @Max(1000, { message: 'must be an integer from 1 to 1000' })
  @ApiPropertyOptional({ type: 'integer' })
  limit?: number = 100;

  /** Only these event types, comma-separated (e.g. `task.created,task.updated`). */
  @IsOptional()
  @IsCommaSeparatedListOf(EVENT_TYPES)
  types?: string;

  /** Long poll: when no event matches yet, wait up to this many seconds (1 to 30) for one. */
  @IsOptional()
  @Transform(digitsToNumber)
  @IsInt({ message: 'must be an integer from 1 to 30' })
  @Min(1, { message: 'must be an integer from 1 to 30' })
  @Max(30, { message: 'must be an integer from 1 to 30' })
  @ApiPropertyOptional({ type: 'integer' })
  wait?: number;
}

export class EventStreamQueryDto extends PickType(EventFeedQueryDto, ['types']) {
  /**
   * Start after this sequence number (0: from the first event); by default the current end, so
   * that only new events come. Last-Event-ID, when sent, wins. At most the last sequence (else 400).
   */
  @SequenceNumber()
  after?: number;
}

/** What an event carries, by type (decisions.md sections 13, 20, 23 and 24). */
@ApiExtraModels(
  TaskDetailDto,
  TrashedTaskDto,
  SprintDto,
  SprintCommitmentDto,
  SprintReportDto,
  CommentDto,
  DeletedCommentDto,
  AttachmentEventDto,
  DeletedAttachmentDto,
)
export class EventDataDto {
  /**
   * The task right after the change, as GET /api/v1/tasks/{taskId} answers it; for
   * task.deleted as GET /api/v1/trash lists it (with deletedAt); for task.purged `{id}` only.
   */
  @ApiProperty({ required: false, anyOf: [{ $ref: getSchemaPath(TaskDetailDto) }, { $ref: getSchemaPath(TrashedTaskDto) }, ID_ONLY] })
  task?: TaskDetailDto | TrashedTaskDto | { id: string };
  /** The sprint right after the change, as GET /api/v1/sprints/{sprintId} answers it; for sprint.deleted `{id}` only. */
  @ApiProperty({ required: false, anyOf: [{ $ref: getSchemaPath(SprintDto) }, ID_ONLY] })
  sprint?: SprintDto | { id: string };
  /**
   * label.created and label.updated: the label right after the change, as GET /api/v1/labels
   * lists it. Tasks show labels by id: a mirror joins them (README, the change feed).
   */
  label?: LabelDto;
  /** member.created and member.updated: the member right after the change, as GET /api/v1/members lists it. */
  member?: MemberDto;
  /**
   * comment.created and comment.updated: the comment right after the change, as
   * GET /api/v1/tasks/{taskId}/comments/{commentId} answers it; comment.deleted: `{id, taskId, parentId}`.
   */
  @ApiProperty({ required: false, anyOf: [{ $ref: getSchemaPath(CommentDto) }, { $ref: getSchemaPath(DeletedCommentDto) }] })
  comment?: CommentDto | DeletedCommentDto;
  /**
   * attachment.created: the attachment as GET /api/v1/tasks/{taskId}/attachments/{attachmentId}
   * answers it, without downloadUrl and downloadUrlExpiresAt; attachment.deleted: `{id, taskId}`.
   */
  @ApiProperty({ required: false, anyOf: [{ $ref: getSchemaPath(AttachmentEventDto) }, { $ref: getSchemaPath(DeletedAttachmentDto) }] })
  attachment?: AttachmentEventDto | DeletedAttachmentDto;
  /** task.updated, sprint.updated, label.updated, member.updated and comment.updated: each field's before and after, as in history. */
  changes?: FieldChangeDto[];
  /** task.dependency_added and task.dependency_removed: the other task, which blocks (or blocked) `task`. */
  @ApiPropertyOptional({ format: 'uuid' })
  blockedById?: string;
  /**
   * sprint.activated: what the sprint committed to (`{committed}`); sprint.closed: its report,
   * frozen at the close, as GET /api/v1/sprints/{sprintId}/report answers it from then on.
   */
  @ApiProperty({ required: false, anyOf: [{ $ref: getSchemaPath(SprintCommitmentDto) }, { $ref: getSchemaPath(SprintReportDto) }] })
  report?: SprintCommitmentDto | SprintReportDto;
}

export class EventDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  /** Per project, from 1, gap-free, in commit order. */
  @ApiProperty({ type: 'integer', minimum: 1 })
  sequence: number;
  @ApiProperty({ enum: EVENT_TYPES })
  type: string;
  @ApiProperty({ type: String, format: 'date-time' })
  occurredAt: string;
  /** "<key name> (API)", or "App" for the product's app. */
  actor: string;
  data: EventDataDto;
}

/** A problem of the feed's query; when `after` is beyond the end of the feed, the feed's last sequence with it. */
export class EventFeedProblemDto extends ProblemDto {
  /** With `after` beyond the end (validation_failed): the project's last sequence, where a reader may start. */
  lastSequence?: number;
}

export class EventFeedDto {
  /** Oldest first. */
  events: EventDto[];
  /** The last sequence returned, or `after` when none: pass it as `after` next time. */
  @ApiProperty({ type: 'integer', minimum: 0 })
  nextAfter: number;
  /** More events match after these: read again at once. */
  hasMore: boolean;
}
