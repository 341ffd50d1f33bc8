import { Prisma } from '../generated/prisma/client';
import { shownFields } from '../common/fields/fields';
import { ATTACHMENT_FIELDS, ATTACHMENT_SQL } from './attachment-fields';

/** What answers and events show of an attachment besides ATTACHMENT_FIELDS' shown columns: its author, `{keyId, name}`. */
export const ATTACHMENT_RELATION_VIEWS = {
  author: `json_build_object('keyId', a.author_key_id, 'name', a.author_name)`,
} as const;

const RELATION_NAMES = Object.keys(ATTACHMENT_RELATION_VIEWS) as (keyof typeof ATTACHMENT_RELATION_VIEWS)[];

/** What the service adds to the view in an answer (never in an event: decisions.md section 24). */
export const DOWNLOAD_LINK_KEYS = ['downloadUrl', 'downloadUrlExpiresAt'] as const;

/** The keys of an attachment's JSON in an event: its shown fields, then its relation views; answers add DOWNLOAD_LINK_KEYS. */
export function attachmentKeys(): string[] {
  return [...shownFields(ATTACHMENT_FIELDS, 'list'), ...RELATION_NAMES];
}

/**
 * The JSON shape of an attachment as events carry it, built by PostgreSQL from the row `a`: the
 * one definition used by the answers (which add the download link) and by attachment.created.
 */
export const ATTACHMENT_JSON = Prisma.raw(
  `json_build_object(\n    ${[...ATTACHMENT_SQL.jsonPairs('list'), ...RELATION_NAMES.map((name) => `'${name}', ${ATTACHMENT_RELATION_VIEWS[name]}`)].join(',\n    ')}\n  )`,
);
