import type { FieldError } from '../common/errors/problem';

/** decisions.md section 24: 1 to 255 code points, no `/`, `\` or control characters. */
const MAX_NAME_CODE_POINTS = 255;
const FORBIDDEN = /[/\\\p{Cc}]/u;

/** A filename as sent, without the path a client may have sent with it: its last segment. */
export function lastSegment(filename: string): string {
  return filename.split(/[/\\]/).at(-1) ?? '';
}

/** What is wrong with `name` as an attachment's name (for the part `field`), or null. */
export function nameProblem(name: string, field: 'file' | 'name'): FieldError | null {
  const length = [...name].length;
  const what = field === 'file' ? "the file's name" : 'name';
  if (length === 0) return { field, message: `${what} must have 1 to ${MAX_NAME_CODE_POINTS} characters` };
  if (length > MAX_NAME_CODE_POINTS)
    return { field, message: `${what} must have at most ${MAX_NAME_CODE_POINTS} characters (code points), has ${length}` };
  if (FORBIDDEN.test(name) || /\p{Cs}/u.test(name)) return { field, message: `${what} must not contain /, \\ or control characters` };
  return null;
}
