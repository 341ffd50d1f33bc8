import type { CursorCodec, CursorKind, CursorPosition, ListQuery } from './cursor';

/**
 * Cuts a keyset page: the query fetched `limit + 1` items, so an extra item means there
 * is a next page, and the cursor points after the last item shown (bound to `list`, the query
 * that asked for the page). The last page has `nextCursor: null`, so no cursor ever leads to an
 * empty page.
 */
export function toPage<T>(
  items: T[],
  limit: number,
  cursors: CursorCodec,
  kind: CursorKind,
  list: ListQuery,
  positionOf: (item: T) => CursorPosition,
): { items: T[]; nextCursor: string | null } {
  if (items.length <= limit) return { items, nextCursor: null };
  const shown = items.slice(0, limit);
  return { items: shown, nextCursor: cursors.encode(kind, list, positionOf(shown[shown.length - 1])) };
}
