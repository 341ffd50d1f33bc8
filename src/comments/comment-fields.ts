import {
  bodyField,
  fieldDecorator,
  fieldSql,
  FieldValues,
  id,
  instant,
  integer,
  reference,
  shownField,
  TableOf,
  text,
  WritableField,
  writableFields,
} from '../common/fields/fields';
import type { Comment } from '../generated/prisma/client';

/** A comment's text: 1 to 10 000 code points, not only white space (decisions.md section 23). */
export const COMMENT_BODY = text(1, 10_000, { notBlank: true });

/**
 * A comment's fields, described once: one row per column of `comments` (schema.prisma; TableOf
 * fails the build when a column has no row). From it come the comment's JSON view (its plain
 * fields: comment-view.sql.ts), the insert of its written fields, their TypeScript shape and the
 * validation and OpenAPI properties of its DTOs (comment.dto.ts). What a comment shows that is
 * not a column's value (`mentions`, `author`, `deleted`) is COMMENT_RELATION_VIEWS.
 */
export const COMMENT_FIELDS = {
  id: { column: 'id', kind: id(), write: 'service', shown: 'list' },
  projectId: { column: 'project_id', kind: id(), write: 'service', shown: { not: 'a comment answer is always of the caller’s project' } },
  // From the path: POST /api/v1/tasks/{taskId}/comments.
  taskId: { column: 'task_id', kind: id(), write: 'service', shown: 'list' },
  parentId: { column: 'parent_id', kind: reference(), nullable: true, write: { default: null, createOnly: true }, shown: 'list' },
  // Null only on a tombstone, which the service makes: a body never sends null.
  body: { column: 'body', kind: COMMENT_BODY, nullable: true, write: { clearable: false }, shown: 'list' },
  authorKeyId: { column: 'author_key_id', kind: id(), write: 'service', shown: { not: 'shown as `author` (COMMENT_RELATION_VIEWS)' } },
  authorName: { column: 'author_name', kind: text(1, 200), write: 'service', shown: { not: 'shown as `author` (COMMENT_RELATION_VIEWS)' } },
  revision: {
    column: 'revision',
    kind: integer(1, 2_147_483_647),
    write: 'service',
    shown: { not: 'the number of the current text among the revisions (GET .../revisions)' },
  },
  createdAt: { column: 'created_at', kind: instant(), write: 'service', shown: 'list' },
  updatedAt: { column: 'updated_at', kind: instant(), write: 'service', shown: 'list' },
  editedAt: { column: 'edited_at', kind: instant(), nullable: true, write: 'service', shown: 'list' },
  deletedAt: {
    column: 'deleted_at',
    kind: instant(),
    nullable: true,
    write: 'service',
    shown: { not: 'shown as `deleted` (COMMENT_RELATION_VIEWS)' },
  },
} as const satisfies TableOf<Comment>;

/** The SQL derived from COMMENT_FIELDS, on the comment row `c`. */
export const COMMENT_SQL = fieldSql(COMMENT_FIELDS, 'c');

export const COMMENT_WRITABLE = writableFields(COMMENT_FIELDS);

/** A comment's fields that clients write, as the API names them. */
export type CommentFields = FieldValues<typeof COMMENT_FIELDS, WritableField<typeof COMMENT_FIELDS>>;

/** On a request DTO's property: the validation and OpenAPI property of its COMMENT_FIELDS row. */
export const CommentBodyField = fieldDecorator(COMMENT_FIELDS, bodyField, 'CommentBodyField');

/** On an answer DTO's property: the OpenAPI property of its COMMENT_FIELDS row. */
export const CommentAnswerField = fieldDecorator(COMMENT_FIELDS, shownField, 'CommentAnswerField');
