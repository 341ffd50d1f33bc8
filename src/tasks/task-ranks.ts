import { Prisma } from '../generated/prisma/client';

/**
 * A task's place in its project's backlog order (decisions.md section 18), and the arithmetic of
 * those places. A rank is a 63-bit integer written as 16 lower-case hex digits: fixed width, so
 * that ranks sort byte by byte exactly as the integers do, and are always 16 characters long (the
 * contract allows 64). The trash keeps its tasks' ranks: a restored task comes back to its place,
 * and ranks are unique among all of a project's tasks (a constraint of the database).
 *
 * - A new task's rank is RANK_BASE + s x RANK_GAP, where s is the sequence number of its
 *   `task.created` event. It is computed in SQL by the insert itself, which runs under the
 *   project's event-number lock (ChangeLog.record), so creates need no lock of their own and
 *   never collide: sequences only grow, and each is used once. Tasks that existed before ranks
 *   did sit below RANK_BASE, in creation order (migration `task_rank`).
 * - A move (TaskOrderService) places tasks between two neighbours: evenly spaced between their
 *   ranks, or, at the bottom, RANK_GAP apart below the rank the next create would get (the
 *   ceiling), so that a create committed meanwhile still lands after them.
 * - When two neighbours have no integer left between them (about 32 moves into one gap), the
 *   move rewrites the ranks of a window of at most RANK_WINDOW neighbours on each side, evenly
 *   spread: a rebalance, each rewritten task recorded as a change of its rank.
 *
 * Why integers and not a fractional-indexing package (variable-length base-62 keys): a create
 * must compute its rank inside its insert, in SQL, where a sequence number and `to_hex` give it
 * in one expression, and a move's arithmetic is then a BigInt division; variable-length keys
 * would need the same algorithm twice, in TypeScript and in PL/pgSQL, and grow with moves until
 * they are rewritten anyway.
 */
export const RANK_BASE = 2n ** 62n;
export const RANK_GAP = 2n ** 32n;
/** How many neighbours on each side a rebalance may rewrite, at most. */
export const RANK_WINDOW = 64;
/** A rebalance spreads its window at least this far apart when the window allows it. */
const REBALANCE_SPACING = 2n ** 24n;

/** The rank as the API shows it. */
export function rankText(value: bigint): string {
  return value.toString(16).padStart(16, '0');
}

export function rankValue(rank: string): bigint {
  return BigInt(`0x${rank}`);
}

/** SQL for the rank of the task created by the event numbered `sequence` (an SQL expression). */
export function createdRank(sequence: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`lpad(to_hex(${RANK_BASE}::bigint + (${sequence}) * ${RANK_GAP}::bigint), 16, '0')`;
}

/** The rank the next create will get at the least, after the event numbered `lastSequence`: ranks placed at the bottom stay below it. */
export function ceilingAfter(lastSequence: bigint): bigint {
  return RANK_BASE + (lastSequence + 1n) * RANK_GAP;
}

/** The tasks on either side of the place a move puts its tasks, nearest first, and the ranks beyond which nothing is. */
export interface Neighbourhood {
  /** Tasks below the place, nearest first (their ranks descending). */
  below: { id: string; rank: bigint }[];
  /** Tasks above the place, nearest first (their ranks ascending). */
  above: { id: string; rank: bigint }[];
  /** The least rank a move may use, exclusive (nothing can be below 0). */
  floor: bigint;
  /** The greatest, exclusive: the next create's rank when nothing is above. */
  ceiling: bigint;
}

/** New ranks: those of the moved tasks, in their order, and of the neighbours a rebalance rewrites. */
export interface Placement {
  moved: bigint[];
  rebalanced: { id: string; rank: bigint }[];
}

/**
 * The ranks of `count` tasks put, in order, between the nearest neighbours of `around`:
 * evenly spread between them (at the bottom or the top, RANK_GAP apart from the one neighbour),
 * or, when there is no room, with the nearest neighbours rewritten too (a rebalance). Null when
 * even RANK_WINDOW neighbours on each side leave no room (never with 63-bit ranks in practice).
 */
export function place(around: Neighbourhood, count: number): Placement | null {
  const n = BigInt(count);
  const lo = around.below[0]?.rank ?? around.floor;
  const hi = around.above[0]?.rank ?? around.ceiling;
  if (around.below.length === 0 && around.above.length > 0 && hi - n * RANK_GAP > around.floor) {
    return { moved: Array.from({ length: count }, (_, i) => hi - (n - BigInt(i)) * RANK_GAP), rebalanced: [] };
  }
  if (around.above.length === 0 && lo + n * RANK_GAP < around.ceiling && around.below.length > 0) {
    return { moved: Array.from({ length: count }, (_, i) => lo + BigInt(i + 1) * RANK_GAP), rebalanced: [] };
  }
  if (hi - lo > n) return { moved: spread(lo, hi, count), rebalanced: [] };
  return rebalance(around, count);
}

/** `count` ranks evenly spread strictly between lo and hi (hi - lo > count). */
function spread(lo: bigint, hi: bigint, count: number): bigint[] {
  const step = (hi - lo) / BigInt(count + 1);
  return Array.from({ length: count }, (_, i) => lo + step * BigInt(i + 1));
}

/**
 * The smallest window of neighbours (growing one on each side in turn) whose bounds leave
 * REBALANCE_SPACING between every task placed in it, or the widest one that leaves any room;
 * the window's tasks keep their order around the moved ones.
 */
function rebalance(around: Neighbourhood, count: number): Placement | null {
  let best: Placement | null = null;
  for (let size = 1; size <= RANK_WINDOW; size++) {
    const below = around.below.slice(0, size);
    const above = around.above.slice(0, size);
    const lo = around.below[below.length]?.rank ?? around.floor;
    const hi = around.above[above.length]?.rank ?? around.ceiling;
    const total = below.length + count + above.length;
    if (hi - lo <= BigInt(total)) continue;
    const ranks = spread(lo, hi, total);
    const inOrder = [...below].reverse();
    best = {
      rebalanced: [
        ...inOrder.map((task, i) => ({ id: task.id, rank: ranks[i] })),
        ...above.map((task, i) => ({ id: task.id, rank: ranks[inOrder.length + count + i] })),
      ],
      moved: ranks.slice(inOrder.length, inOrder.length + count),
    };
    if ((hi - lo) / BigInt(total + 1) >= REBALANCE_SPACING) return best;
  }
  return best;
}
