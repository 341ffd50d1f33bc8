import { getMetadataStorage } from 'class-validator';
import { READ_ONLY_FIELD } from './validators';

/**
 * Names people send for a field that no edit distance finds, because they are another word for
 * it, not a misspelling. One small table: a name here is offered only where the endpoint has the
 * field it points to.
 */
const ALIASES: Record<string, string> = {
  labels: 'labelIds',
  storyPoints: 'estimate',
  story_points: 'estimate',
  points: 'estimate',
  assignee: 'assigneeId',
  sprint: 'sprintId',
  parent: 'parentId',
  // A comment's text and the comment it answers, as other APIs and chat tools name them.
  text: 'body',
  content: 'body',
  message: 'body',
  comment: 'body',
  replyTo: 'parentId',
  inReplyTo: 'parentId',
};

/**
 * "did you mean `labelIds`?" for an unknown field, or null: a field the endpoint defines (read
 * from the same class-validator metadata that makes the field unknown, so the endpoint's own
 * field names and nothing else) whose name is within a small edit distance of `sent`, or the
 * field an alias names. Read-only fields are never offered: sending them is refused too.
 */
export function didYouMean(sent: string, dto: object | undefined): string | null {
  const fields = writableFieldsOf(dto);
  // No field is near a name this long, and its distance would cost its length times theirs.
  if (fields.length === 0 || sent.length > MAX_HINTED_NAME) return null;
  const alias = ALIASES[sent];
  if (alias !== undefined && fields.includes(alias)) return `did you mean \`${alias}\`?`;
  const close = closest(sent, fields);
  const offered = close.length > 0 ? close : startOf(sent, fields);
  return offered.length === 0 ? null : `did you mean ${offered.map((field) => `\`${field}\``).join(' or ')}?`;
}

/**
 * The one field whose name `sent` begins, when no field is near it: `label` for `labelIds`, `due`
 * for `dueDate`, `desc` for `description`, `start` for `startDate` (compared as `closest` does, at
 * least three characters, and only when a single field begins so).
 */
function startOf(sent: string, fields: string[]): string[] {
  const plain = (name: string) => name.toLowerCase().replace(/[_-]/g, '');
  if (plain(sent).length < 3) return [];
  const starting = fields.filter((field) => plain(field).startsWith(plain(sent)));
  return starting.length === 1 ? starting : [];
}

/** Longer than any field name by far: not compared. */
const MAX_HINTED_NAME = 64;

const writableFields = new WeakMap<object, string[]>();

/** The fields a DTO instance's class defines and a client may send, in declaration order. */
function writableFieldsOf(dto: object | undefined): string[] {
  if (!dto || typeof dto !== 'object') return [];
  const type = dto.constructor;
  let fields = writableFields.get(type);
  if (!fields) {
    const metadata = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
    const readOnly = new Set(metadata.filter((rule) => rule.name === READ_ONLY_FIELD).map((rule) => rule.propertyName));
    fields = [...new Set(metadata.map((rule) => rule.propertyName))].filter((field) => !readOnly.has(field));
    writableFields.set(type, fields);
  }
  return fields;
}

/**
 * The fields nearest to `sent`, compared case-insensitively and without `_` and `-` (`label_ids`
 * is `labelIds`), when near enough: an optimal string alignment distance (Levenshtein with
 * transpositions: `titel` is one edit from `title`) of at most 2, and at most a third of the
 * longer name, so that a short name is not "near" every other short name (`q` and `id`).
 */
function closest(sent: string, fields: string[]): string[] {
  const plain = (name: string) => name.toLowerCase().replace(/[_-]/g, '');
  const scored = fields.map((field) => ({ field, distance: editDistance(plain(sent), plain(field)) }));
  const near = scored.filter(({ field, distance }) => distance <= Math.min(2, Math.floor(Math.max(sent.length, field.length) / 3)));
  const best = Math.min(...near.map(({ distance }) => distance));
  return near.filter(({ distance }) => distance === best).map(({ field }) => field);
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions, each 1. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
