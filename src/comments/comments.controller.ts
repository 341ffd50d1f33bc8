import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyAuthenticated, CurrentCaller, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { IfMatch } from '../common/http/entity-tag';
import { JSON_CONTENT_TYPE, type JsonText } from '../common/http/json-text';
import { NonEmptyBodyPipe } from '../common/validation/non-empty-body.pipe';
import {
  CommentListDto,
  CommentResponseDto,
  CommentRevisionListDto,
  CREATE_COMMENT_EXAMPLE,
  CreateCommentDto,
  ListCommentsQueryDto,
  UpdateCommentDto,
} from './comment.dto';
import { CommentsService } from './comments.service';

/** What an edit or a deletion of a comment needs beyond the permission (decisions.md section 23). */
const AUTHOR_OR_MODERATOR = {
  alternatives: ['content:moderate' as const],
  forbidden: 'the comment was written with another key and this one lacks content:moderate (requiredPermission: content:moderate)',
};

@ApiTags('comments')
@ApiKeyAuthenticated()
@Controller('api/v1/tasks/:taskId/comments')
export class CommentsController {
  constructor(private readonly comments: CommentsService) {}

  /** The task's comments and replies, oldest first, paginated by cursor; deleted comments that still have replies show as tombstones. */
  @Get()
  @Header('Content-Type', JSON_CONTENT_TYPE)
  @ApiOkResponse({ type: CommentListDto })
  @ApiBadRequestResponse({ description: 'An invalid limit or cursor, or an unknown query parameter', type: ProblemDto })
  @ApiNotFoundResponse({ description: 'No such live task in this project (a task in the trash included)', type: ProblemDto })
  listComments(
    @CurrentCaller() caller: Caller,
    @Param('taskId') taskId: string,
    @Query() query: ListCommentsQueryDto,
  ): Promise<JsonText<CommentListDto>> {
    return this.comments.list(caller, taskId, query);
  }

  /** Comments on a task, or replies to one of its top-level comments; `<@membershipId>` in the body mentions a member. */
  @Post()
  @RequirePermission('comments:write')
  @ApiBody({ type: CreateCommentDto, examples: { comment: { value: CREATE_COMMENT_EXAMPLE } } })
  @ApiCreatedResponse({
    type: CommentResponseDto,
    headers: {
      Location: { description: 'The new comment: /api/v1/tasks/{taskId}/comments/{commentId}', required: true, schema: { type: 'string' } },
    },
  })
  @ApiBadRequestResponse({
    description:
      'Invalid or unknown field; a mention of someone who is not a member, or of more than 50 members (validation_failed naming body); parentId names a reply (nesting_too_deep)',
    type: ProblemDto,
  })
  @ApiNotFoundResponse({ description: 'No such live task in this project, or parentId is not a comment of this task', type: ProblemDto })
  async createComment(
    @CurrentCaller() caller: Caller,
    @Param('taskId') taskId: string,
    @Body() dto: CreateCommentDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CommentResponseDto> {
    const created = await this.comments.create(caller, taskId, dto);
    res.location(`/api/v1/tasks/${taskId}/comments/${created.comment.id}`);
    return created;
  }

  /** One comment of the task; a deleted one that still has replies shows as a tombstone (`deleted: true`, no body). */
  @Get(':commentId')
  @ApiNotFoundResponse({ description: 'No such live task in this project, or no such comment of it', type: ProblemDto })
  getComment(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string, @Param('commentId') commentId: string): Promise<CommentResponseDto> {
    return this.comments.get(caller, taskId, commentId);
  }

  /**
   * Replaces the comment's text; the previous one stays among its revisions. Only the key that
   * wrote it, or one with content:moderate. The same text again changes nothing.
   */
  @Patch(':commentId')
  @RequirePermission('comments:write', AUTHOR_OR_MODERATOR)
  @ApiBadRequestResponse({
    description:
      'Empty body, invalid or unknown field, parentId (read-only), or a mention of someone who is not a member (validation_failed naming body)',
    type: ProblemDto,
  })
  @ApiNotFoundResponse({ description: 'No such live task in this project, or no such comment of it (a tombstone included)', type: ProblemDto })
  updateComment(
    @CurrentCaller() caller: Caller,
    @Param('taskId') taskId: string,
    @Param('commentId') commentId: string,
    @Body(NonEmptyBodyPipe) dto: UpdateCommentDto,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<CommentResponseDto> {
    return this.comments.update(caller, taskId, commentId, dto, ifMatch);
  }

  /**
   * Deletes the comment and its revisions for good. A top-level comment that still has replies
   * stays as a tombstone until its last reply goes. Only the key that wrote it, or one with content:moderate.
   */
  @Delete(':commentId')
  @HttpCode(204)
  @RequirePermission('comments:write', AUTHOR_OR_MODERATOR)
  @ApiNotFoundResponse({ description: 'No such live task in this project, or no such comment of it (a tombstone included)', type: ProblemDto })
  deleteComment(
    @CurrentCaller() caller: Caller,
    @Param('taskId') taskId: string,
    @Param('commentId') commentId: string,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<void> {
    return this.comments.delete(caller, taskId, commentId, ifMatch);
  }

  /** Every text the comment had, newest first, each with the key that wrote it; none on a tombstone. */
  @Get(':commentId/revisions')
  @ApiNotFoundResponse({ description: 'No such live task in this project, or no such comment of it', type: ProblemDto })
  listCommentRevisions(
    @CurrentCaller() caller: Caller,
    @Param('taskId') taskId: string,
    @Param('commentId') commentId: string,
  ): Promise<CommentRevisionListDto> {
    return this.comments.revisions(caller, taskId, commentId);
  }
}
