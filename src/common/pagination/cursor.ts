import { Injectable, OnModuleInit } from '@nestjs/common';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../errors/problem';
import { isInstant } from '../dates';
import { isUuid } from '../ids';
import { PrismaService } from '../../database/prisma.service';
import type { PageQueryDto } from './page.dto';

/** Which list a cursor belongs to: a cursor of one list is refused by the others. */
export type CursorKind = 'tasks' | 'trash' | 'history' | 'webhook_deliveries' | 'comments';

/** What a key a cursor carries may be: printable ASCII (a rank), as the database holds it. */
const CURSOR_KEY = /^[!-~]{1,64}$/;

/** A keyset position: the sort timestamp and id of the last item of a page. */
export interface CursorPosition {
  at: Date;
  id: string;
}

/** A keyset position in an order by a score first (`sort=relevance`): the score as PostgreSQL wrote it, then time and id. */
export interface ScoredCursorPosition extends CursorPosition {
  score: string;
}

/** A score as PostgreSQL writes a real. */
const CURSOR_SCORE = /^-?\d+(\.\d+)?(e[-+]?\d+)?$/;

/**
 * The query of one list that a cursor belongs to: its validated query DTO (every filter, `q`,
 * `sort`, and whatever parameter a list gains later), plus the path ids that choose the list
 * (`{taskId}` of a task's history). Every own property counts but the page parameters below.
 */
export interface ListQuery {
  query: PageQueryDto;
  path?: Record<string, string>;
}

/**
 * The parameters that move through a list without choosing it: a cursor stays valid whatever
 * their values (another `limit` on the next page is fine). A record over PageQueryDto's keys,
 * so that a page parameter added there must be placed here too (the compiler says so).
 */
const PAGE_PARAMETERS: Record<keyof PageQueryDto, true> = { limit: true, cursor: true };

/**
 * A short digest of what chose a list's items: the path ids and query values (as validated,
 * defaults included), in name order, without the page parameters. Two requests of one list
 * share it exactly when they ask for the same items.
 */
export function queryDigest({ query, path = {} }: ListQuery): string {
  const chosen = Object.entries({ ...query, ...path })
    .filter(([name, value]) => value !== undefined && !(name in PAGE_PARAMETERS))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(chosen)).digest().subarray(0, 12).toString('base64url');
}

/**
 * Opaque, tamper-evident list cursors: base64url(JSON [kind, query digest, ...position]) + "." +
 * HMAC. A cursor belongs to the list and the query that issued it: sent to another list, or with
 * other filters, `q`, `search` or `sort` (anything but `limit`), it is 400 `invalid_cursor` saying so,
 * rather than a page of another list that would silently skip or repeat items. The signing key
 * is made once per database (migration `constraints`), so cursors outlive restarts and work
 * across instances. Anything not issued here, or altered, is 400 `invalid_cursor` too.
 */
@Injectable()
export class CursorCodec implements OnModuleInit {
  private key: Buffer;

  constructor(private readonly prisma: PrismaService) {}

  async onModuleInit(): Promise<void> {
    const setting = await this.prisma.serviceSetting.findUniqueOrThrow({ where: { name: 'cursor_signing_key' } });
    this.key = Buffer.from(setting.value, 'hex');
  }

  /** A cursor after the item at `position` (a time and an id) of the list `kind` asked for by `list`. */
  encode(kind: CursorKind, list: ListQuery, position: CursorPosition): string {
    return this.sealed(kind, list, [position.at.toISOString(), position.id]);
  }

  /** A cursor after the item whose unique sort key is `key` (a rank). */
  encodeKey(kind: CursorKind, list: ListQuery, key: string): string {
    return this.sealed(kind, list, [key]);
  }

  /** A cursor after the item at `position` (a score, then a time and an id). */
  encodeScored(kind: CursorKind, list: ListQuery, position: ScoredCursorPosition): string {
    return this.sealed(kind, list, [position.score, position.at.toISOString(), position.id]);
  }

  /** The scored position that `list.query.cursor` names; null when none was sent. */
  scoredAfter(kind: CursorKind, list: ListQuery): ScoredCursorPosition | null {
    const values = this.opened(kind, list);
    if (values === null) return null;
    const [score, at, id, ...rest] = values;
    if (
      typeof score !== 'string' ||
      !CURSOR_SCORE.test(score) ||
      typeof at !== 'string' ||
      !isInstant(at) ||
      typeof id !== 'string' ||
      !isUuid(id) ||
      rest.length
    )
      throw notIssuedHere();
    return { score, at: new Date(at), id };
  }

  /** The position that `list.query.cursor` names; null when none was sent (the first page). */
  positionAfter(kind: CursorKind, list: ListQuery): CursorPosition | null {
    const values = this.opened(kind, list);
    if (values === null) return null;
    const [at, id, ...rest] = values;
    if (typeof at !== 'string' || !isInstant(at) || typeof id !== 'string' || !isUuid(id) || rest.length) throw notIssuedHere();
    return { at: new Date(at), id };
  }

  /** The unique sort key that `list.query.cursor` names; null when none was sent. */
  keyAfter(kind: CursorKind, list: ListQuery): string | null {
    const values = this.opened(kind, list);
    if (values === null) return null;
    const [key, ...rest] = values;
    if (typeof key !== 'string' || !CURSOR_KEY.test(key) || rest.length) throw notIssuedHere();
    return key;
  }

  private sealed(kind: CursorKind, list: ListQuery, position: string[]): string {
    const payload = Buffer.from(JSON.stringify([kind, queryDigest(list), ...position])).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** The position values of the cursor `list` carries, once it is known to be this list's and this query's; null without one. */
  private opened(kind: CursorKind, list: ListQuery): unknown[] | null {
    const cursor = list.query.cursor;
    if (cursor === undefined) return null;
    const [payload, signature, ...rest] = cursor.split('.');
    if (!payload || !signature || rest.length || !this.verify(payload, signature)) throw notIssuedHere();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw notIssuedHere();
    }
    if (!Array.isArray(decoded) || decoded.length < 2) throw notIssuedHere();
    const [cursorKind, digest, ...position] = decoded as unknown[];
    if (cursorKind !== kind) {
      throw badRequest('invalid_cursor', 'cursor belongs to another list: send it only to the list whose page gave it', 'cursor');
    }
    if (digest !== queryDigest(list)) {
      throw badRequest(
        'invalid_cursor',
        'cursor belongs to another query: it was issued with other filters, q, search or sort; send the query parameters of the page that gave it (only limit may change), or leave cursor out to start from the first page',
        'cursor',
      );
    }
    return position;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, 16).toString('base64url');
  }

  private verify(payload: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

function notIssuedHere() {
  return badRequest('invalid_cursor', 'cursor is not a cursor this service issued, or it was altered', 'cursor');
}
