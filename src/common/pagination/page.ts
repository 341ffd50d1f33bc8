import type { CursorCodec, CursorKind, CursorPosition } from './cursor';

/**
 * Cuts a keyset page: the query fetched `limit + 1` items, so an extra item means there
 * is a next page, and the cursor points after the last item shown. The last page has
 * `nextCursor: null`, so no cursor ever leads to an empty page.
 */
export function toPage<T>(
  items: T[],
  limit: number,
  cursors: CursorCodec,
  kind: CursorKind,
  positionOf: (item: T) => CursorPosition,
): { items: T[]; nextCursor: string | null } {
  if (items.length <= limit) return { items, nextCursor: null };
  const shown = items.slice(0, limit);
  return { items: shown, nextCursor: cursors.encode(kind, positionOf(shown[shown.length - 1])) };
}
