import { invalidFields } from '../common/errors/problem';
import { Prisma } from '../generated/prisma/client';
import { statement } from '../database/sql';

/**
 * A mention in a comment's text (decisions.md section 23): `<@`, a UUID, `>`. Any other text in
 * angle brackets is plain text. A UUID is read in either case (RFC 9562) and names the member
 * by its lower-case id, as the API writes ids.
 */
const MENTION = /<@([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})>/g;

/** Distinct members one comment may mention, at most (decisions.md section 23). */
export const MAX_MENTIONS = 50;

/**
 * The membership ids `body` mentions, in order of first appearance, once each: 400
 * validation_failed naming `body` when they are more than MAX_MENTIONS (a rule of the text alone,
 * checked before anything is looked up).
 */
export function mentionedIds(body: string): string[] {
  const ids = [...new Set(Array.from(body.matchAll(MENTION), (match) => match[1].toLowerCase()))];
  if (ids.length > MAX_MENTIONS) {
    throw invalidFields('validation_failed', [{ field: 'body', message: `mentions ${ids.length} members: at most ${MAX_MENTIONS} in one comment` }]);
  }
  return ids;
}

/** The ids among `ids` that are members of the project (`SELECT`, to send with a write's locks). */
export function membersAmong(projectId: string, ids: string[]) {
  return statement<{ id: string }>(
    Prisma.sql`SELECT m.id::text AS id FROM memberships m WHERE m.id = ANY(${ids}::uuid[]) AND m.project_id = ${projectId}::uuid`,
  );
}

/**
 * 400 validation_failed naming `body` when it mentions someone who is not a member of the
 * project (`found`: the ids membersAmong answered). Members are never removed from a project, so
 * a mention valid when written stays valid.
 */
export function assertMembers(ids: string[], found: { id: string }[]): void {
  const members = new Set(found.map((row) => row.id));
  const strangers = ids.filter((id) => !members.has(id));
  if (strangers.length > 0) {
    const named = strangers.map((id) => `<@${id}>`).join(', ');
    const which = strangers.length === 1 ? 'is not a member' : 'are not members';
    throw invalidFields('validation_failed', [
      { field: 'body', message: `mentions ${named}, which ${which} of this project (GET /api/v1/members lists them)` },
    ]);
  }
}
