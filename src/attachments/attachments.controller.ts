import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiKeyAuthenticated, CurrentCaller, Public, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { IdempotencyAfterBody } from '../idempotency/idempotency.interceptor';
import { AttachmentListDto, AttachmentResponseDto, UploadAttachmentDto } from './attachment.dto';
import { AttachmentsService } from './attachments.service';

/** What a deletion needs beyond the permission (decisions.md section 24). */
const UPLOADER_OR_MODERATOR = {
  alternatives: ['content:moderate' as const],
  forbidden: 'the attachment was uploaded with another key and this one lacks content:moderate (requiredPermission: content:moderate)',
};

/** The headers of the bytes, by their key or by a downloadUrl (content-answer.ts). */
const CONTENT_HEADERS = {
  'Content-Length': { required: true, schema: { type: 'integer', minimum: 0 } },
  'Accept-Ranges': { required: true, schema: { type: 'string', enum: ['bytes'] } },
  'X-Content-Type-Options': { required: true, schema: { type: 'string', enum: ['nosniff'] } },
  'Content-Security-Policy': { required: true, schema: { type: 'string', enum: ["sandbox; default-src 'none'"] } },
  'Content-Disposition': {
    description: "`inline` for image/png, image/jpeg, image/gif and image/webp, else `attachment`; `filename*=UTF-8''<percent-encoded name>`",
    required: true,
    schema: { type: 'string', pattern: "^(inline|attachment); filename\\*=UTF-8''[A-Za-z0-9%!._~-]+$" },
  },
};
const BYTES = { '*/*': { schema: { type: 'string', format: 'binary' } } };

/** The answers of the bytes' routes, by key or by downloadUrl. */
function ContentAnswers(): MethodDecorator {
  return (target, key, descriptor) => {
    ApiResponse({ status: 200, description: 'The bytes, with the Content-Type stored for them', headers: CONTENT_HEADERS, content: BYTES })(
      target,
      key,
      descriptor,
    );
    ApiResponse({
      status: 206,
      description: 'The range asked for (one range)',
      headers: { ...CONTENT_HEADERS, 'Content-Range': { required: true, schema: { type: 'string', pattern: '^bytes \\d+-\\d+/\\d+$' } } },
      content: BYTES,
    })(target, key, descriptor);
    ApiResponse({
      status: 416,
      description: '`range_not_satisfiable`: the range starts past the end; Content-Range gives the size',
      headers: { 'Content-Range': { required: true, schema: { type: 'string', pattern: '^bytes \\*/\\d+$' } } },
      type: ProblemDto,
    })(target, key, descriptor);
  };
}

@ApiTags('attachments')
@ApiKeyAuthenticated()
@Controller('api/v1/tasks/:taskId/attachments')
export class AttachmentsController {
  constructor(private readonly attachments: AttachmentsService) {}

  /** The task's attachments, oldest first (at most 100: no pages), each with a downloadUrl that works without a key for 15 minutes. */
  @Get()
  @ApiOkResponse({ type: AttachmentListDto })
  @ApiNotFoundResponse({ description: 'No such live task in this project (a task in the trash included)', type: ProblemDto })
  listAttachments(@CurrentCaller() caller: Caller, @Req() req: Request, @Param('taskId') taskId: string): Promise<AttachmentListDto> {
    return this.attachments.list(caller, req, taskId);
  }

  /**
   * Attaches a file to the task: multipart/form-data with a part `file` (its filename is the
   * name unless a part `name` is sent). The bytes are streamed to storage; the content type is
   * what the bytes are, whatever the client declared.
   */
  @Post()
  @RequirePermission('attachments:write')
  @IdempotencyAfterBody()
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UploadAttachmentDto })
  @ApiCreatedResponse({
    type: AttachmentResponseDto,
    headers: {
      Location: {
        description: 'The new attachment: /api/v1/tasks/{taskId}/attachments/{attachmentId}',
        required: true,
        schema: { type: 'string' },
      },
    },
  })
  @ApiResponse({
    status: 400,
    description:
      'A part other than file and name (unknown_field); no file, an empty file, or a name that is not 1 to 255 characters without / \\ or control characters (validation_failed)',
    type: ProblemDto,
  })
  @ApiNotFoundResponse({ description: 'No such live task in this project (a task in the trash included)', type: ProblemDto })
  @ApiResponse({ status: 409, description: 'The task has 100 attachments already (conflict)', type: ProblemDto })
  @ApiResponse({
    status: 413,
    description:
      'The file is larger than ATTACHMENT_MAX_BYTES (attachment_too_large, with `limit`), answered as soon as it passes it; or the project’s attachments would pass ATTACHMENT_QUOTA_BYTES (storage_quota_exceeded, with `limit` and `used`)',
    type: ProblemDto,
  })
  @ApiResponse({ status: 415, description: 'The body is not multipart/form-data (unsupported_media_type)', type: ProblemDto })
  uploadAttachment(
    @CurrentCaller() caller: Caller,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Param('taskId') taskId: string,
  ): Promise<AttachmentResponseDto | string | undefined> {
    return this.attachments.upload(caller, req, res, taskId);
  }

  /** One attachment of the task, with a downloadUrl that works without a key for 15 minutes. */
  @Get(':attachmentId')
  @ApiOkResponse({ type: AttachmentResponseDto })
  @ApiNotFoundResponse({ description: 'No such live task in this project, or no such attachment of it', type: ProblemDto })
  getAttachment(
    @CurrentCaller() caller: Caller,
    @Req() req: Request,
    @Param('taskId') taskId: string,
    @Param('attachmentId') attachmentId: string,
  ): Promise<AttachmentResponseDto> {
    return this.attachments.get(caller, req, taskId, attachmentId);
  }

  /**
   * The attachment's bytes: Range (one range), ETag and If-None-Match; downloaded (Content-Disposition:
   * attachment) but for PNG, JPEG, GIF and WebP images, and sandboxed, so that an uploaded page never runs.
   */
  @Get(':attachmentId/content')
  @ContentAnswers()
  @ApiNotFoundResponse({ description: 'No such live task in this project, or no such attachment of it', type: ProblemDto })
  getAttachmentContent(
    @CurrentCaller() caller: Caller,
    @Req() req: Request,
    @Res() res: Response,
    @Param('taskId') taskId: string,
    @Param('attachmentId') attachmentId: string,
  ): Promise<void> {
    return this.attachments.content(caller, req, res, taskId, attachmentId);
  }

  /** Deletes the attachment: only the key that uploaded it, or one with content:moderate. Its bytes go once no attachment of the project shares them. */
  @Delete(':attachmentId')
  @HttpCode(204)
  @RequirePermission('attachments:write', UPLOADER_OR_MODERATOR)
  @ApiNotFoundResponse({ description: 'No such live task in this project, or no such attachment of it', type: ProblemDto })
  deleteAttachment(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string, @Param('attachmentId') attachmentId: string): Promise<void> {
    return this.attachments.delete(caller, taskId, attachmentId);
  }
}

@ApiTags('attachments')
@Public()
@Controller('api/v1/attachment-downloads')
export class AttachmentDownloadsController {
  constructor(private readonly attachments: AttachmentsService) {}

  /**
   * An attachment's bytes by its downloadUrl, without a key: as its content route serves them,
   * until the URL expires and while the attachment is live.
   */
  @Get(':attachmentId')
  @ContentAnswers()
  @ApiQuery({ name: 'expires', required: true, description: 'As in the downloadUrl', schema: { type: 'string' } })
  @ApiQuery({ name: 'signature', required: true, description: 'As in the downloadUrl', schema: { type: 'string' } })
  @ApiResponse({ status: 403, description: 'A changed or expired URL (forbidden): ask for the attachment again', type: ProblemDto })
  @ApiNotFoundResponse({ description: 'The attachment is gone, or its task is in the trash', type: ProblemDto })
  downloadAttachment(
    @Req() req: Request,
    @Res() res: Response,
    @Param('attachmentId') attachmentId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.attachments.download(req, res, attachmentId, query);
  }
}
