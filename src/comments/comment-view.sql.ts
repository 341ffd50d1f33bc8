import { Prisma } from '../generated/prisma/client';
import { isoTimestamp } from '../common/dates';
import { shownFields } from '../common/fields/fields';
import { memberJson } from '../projects/project-resources.sql';
import { COMMENT_FIELDS, COMMENT_SQL } from './comment-fields';

/** The JSON of a comment's or a revision's author, `{keyId, name}`, from the row `alias` (its author_key_id and author_name). */
function authorJson(alias: string): string {
  return `json_build_object('keyId', ${alias}.author_key_id, 'name', ${alias}.author_name)`;
}

/**
 * What answers show of a comment besides COMMENT_FIELDS' shown columns, declared once: the
 * members its text mentions, in order of first appearance, with their current names (a rename
 * shows at once, as in a task's assignee); its author; whether it is a tombstone.
 */
export const COMMENT_RELATION_VIEWS = {
  mentions: `COALESCE((
      SELECT json_agg(${memberJson('m').sql} ORDER BY cm.position)
        FROM comment_mentions cm JOIN memberships m ON m.id = cm.membership_id
       WHERE cm.comment_id = c.id), '[]'::json)`,
  author: authorJson('c'),
  deleted: `c.deleted_at IS NOT NULL`,
} as const;

const RELATION_NAMES = Object.keys(COMMENT_RELATION_VIEWS) as (keyof typeof COMMENT_RELATION_VIEWS)[];

/** The keys of a comment's JSON: its shown fields, then its relation views. */
export function commentKeys(): string[] {
  return [...shownFields(COMMENT_FIELDS, 'list'), ...RELATION_NAMES];
}

/**
 * The JSON shape of a comment, built by PostgreSQL from the comment row `c`: the one definition
 * used by every comment answer and by the events that carry a comment. A tombstone's row has no
 * text and no mentions: it shows `body: null`, `mentions: []`, `deleted: true`.
 */
export const COMMENT_JSON = Prisma.raw(
  `json_build_object(\n    ${[...COMMENT_SQL.jsonPairs('list'), ...RELATION_NAMES.map((name) => `'${name}', ${COMMENT_RELATION_VIEWS[name]}`)].join(',\n    ')}\n  )`,
);

/** The JSON of a revision, `{number, body, author, createdAt}`, from the comment_revisions row `r`. */
export const REVISION_JSON = Prisma.raw(
  `json_build_object('number', r.number, 'body', r.body, 'author', ${authorJson('r')}, 'createdAt', ${isoTimestamp('r.created_at')})`,
);
