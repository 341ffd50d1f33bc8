import { ApiHideProperty, ApiProperty, OmitType, PartialType } from '@nestjs/swagger';
import { PatchableField, requireFieldDecorators, SameKeys, ShownField, shownFields, WritableField } from '../common/fields/fields';
import { PageQueryDto } from '../common/pagination/page.dto';
import { ReadOnlyField } from '../common/validation/validators';
import { MemberDto } from '../projects/project-resources.dto';
import { COMMENT_FIELDS, COMMENT_WRITABLE, CommentAnswerField, CommentBodyField, CommentFields } from './comment-fields';
import type { COMMENT_RELATION_VIEWS } from './comment-view.sql';

// ---- What clients send ----

export class CreateCommentDto {
  /**
   * Markdown, 1 to 10 000 characters (code points), not only white space. `<@membershipId>`
   * mentions a member of the project (GET /api/v1/members), at most 50 in one comment.
   */
  @CommentBodyField()
  @ApiProperty({ example: 'Deployed to staging: the sign-in link works there. Ready for review?' })
  body: string;

  /** A top-level comment of the same task to reply to (replies have one level); null or absent: a top-level comment. Cannot be changed later. */
  @CommentBodyField()
  parentId?: string | null;
}

// The body fields are exactly COMMENT_FIELDS' written ones, with their types.
const _createCommentBodyHasEveryField: SameKeys<keyof CreateCommentDto, WritableField<typeof COMMENT_FIELDS>, 'CreateCommentDto'> = true;
const _createCommentBodyTypes: Required<CreateCommentDto> extends CommentFields ? true : false = true;

/** The fields a PATCH may not change (COMMENT_FIELDS' createOnly rows): read-only there. */
const CREATE_ONLY_COMMENT_FIELDS = ['parentId'] as const satisfies readonly Exclude<
  WritableField<typeof COMMENT_FIELDS>,
  PatchableField<typeof COMMENT_FIELDS>
>[];
const _createOnlyListed: SameKeys<
  (typeof CREATE_ONLY_COMMENT_FIELDS)[number],
  Exclude<WritableField<typeof COMMENT_FIELDS>, PatchableField<typeof COMMENT_FIELDS>>,
  'CREATE_ONLY_COMMENT_FIELDS'
> = true;

/** A new text for the comment. `parentId` is read-only here. */
export class UpdateCommentDto extends PartialType(OmitType(CreateCommentDto, CREATE_ONLY_COMMENT_FIELDS), { skipNullProperties: false }) {
  @ApiHideProperty()
  @ReadOnlyField()
  parentId?: never;
}

/** Request examples in the OpenAPI document: valid as they are in any project (they name no ids). */
export const CREATE_COMMENT_EXAMPLE: CreateCommentDto = { body: 'Deployed to staging: the sign-in link works there. Ready for review?' };

/** `limit` and `cursor`, as every paginated list takes them. */
export class ListCommentsQueryDto extends PageQueryDto {}

// ---- What the service answers ----

/** Who wrote a comment, or a revision of it: the key, and its name as history writes actors. */
export class CommentAuthorDto {
  @ApiProperty({ format: 'uuid' })
  keyId: string;
  /** "<key name> (API)". */
  name: string;
}

export class CommentDto {
  @CommentAnswerField()
  id: string;
  @CommentAnswerField()
  taskId: string;
  /** The top-level comment this one replies to; null for a top-level comment. */
  @CommentAnswerField()
  parentId: string | null;
  /** Markdown as written; null on a deleted comment that stays for its replies (`deleted: true`). */
  @CommentAnswerField()
  body: string | null;
  /** The members its text mentions (`<@membershipId>`), in order of first appearance, once each, with their current names. */
  mentions: MemberDto[];
  /** The key that wrote it. */
  author: CommentAuthorDto;
  @CommentAnswerField()
  createdAt: string;
  /** The time of its last change: an edit of its text, or its deletion (a tombstone). */
  @CommentAnswerField()
  updatedAt: string;
  /** When its text last changed; null until then. */
  @CommentAnswerField()
  editedAt: string | null;
  /** True on a tombstone: a top-level comment deleted while it had replies, kept so that the thread keeps its shape. */
  deleted: boolean;
}

// Answers show exactly COMMENT_FIELDS' shown fields and COMMENT_RELATION_VIEWS (comment-view.sql.ts builds them).
const _commentAnswerHasEveryField: SameKeys<
  keyof CommentDto,
  ShownField<typeof COMMENT_FIELDS, 'list'> | keyof typeof COMMENT_RELATION_VIEWS,
  'CommentDto'
> = true;
requireFieldDecorators(CreateCommentDto, CommentBodyField, COMMENT_WRITABLE.all, 'COMMENT_FIELDS says clients write it');
requireFieldDecorators(CommentDto, CommentAnswerField, shownFields(COMMENT_FIELDS, 'list'), 'COMMENT_FIELDS shows it');

export class CommentResponseDto {
  comment: CommentDto;
}

export class CommentListDto {
  /** Oldest first (createdAt, then id); replies are in the same list, each with its parentId. */
  comments: CommentDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page; null on the last page' })
  nextCursor: string | null;
  /** All comments of the task, tombstones included, across all pages. */
  @ApiProperty({ type: 'integer', minimum: 0 })
  total: number;
}

export class CommentRevisionDto {
  /** 1 is the original text; the highest is the current one. */
  @ApiProperty({ type: 'integer', minimum: 1 })
  number: number;
  body: string;
  /** The key that wrote this text (a moderator's edit is the moderator's). */
  author: CommentAuthorDto;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
}

export class CommentRevisionListDto {
  /** Newest first; none on a tombstone. */
  revisions: CommentRevisionDto[];
}

/** What comment.deleted shows of a deleted comment: which it was, and where. */
export class DeletedCommentDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  taskId: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  parentId: string | null;
}
