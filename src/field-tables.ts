import type { FieldTable } from './common/fields/fields';
import { ATTACHMENT_FIELDS } from './attachments/attachment-fields';
import { COMMENT_FIELDS } from './comments/comment-fields';
import { SPRINT_FIELDS } from './sprints/sprint-fields';
import { TASK_FIELDS } from './tasks/task-fields';

/**
 * Every field table, by the SQL table it describes: what the database must hold of their kinds
 * (src/common/fields/field-rules.ts) is checked and migrated from here. A new resource's table
 * goes here too (docs/extending.md).
 */
export const FIELD_TABLES: Record<string, FieldTable> = {
  tasks: TASK_FIELDS,
  sprints: SPRINT_FIELDS,
  comments: COMMENT_FIELDS,
  attachments: ATTACHMENT_FIELDS,
};
