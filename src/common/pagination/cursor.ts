import { Injectable, OnModuleInit } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../errors/problem';
import { isInstant } from '../dates';
import { isUuid } from '../ids';
import { PrismaService } from '../../database/prisma.service';

/** Which list a cursor belongs to: a cursor of one list is refused by the others. */
export type CursorKind = 'tasks' | 'trash' | 'history' | 'webhook_deliveries' | 'comments';

/** Lists whose position is a unique sort key of its own (the backlog order's rank), not a time and an id. */
export type KeyCursorKind = 'tasks_by_rank';

/** What a key a cursor carries may be: printable ASCII (a rank), as the database holds it. */
const CURSOR_KEY = /^[!-~]{1,64}$/;

/** A keyset position: the sort timestamp and id of the last item of a page. */
export interface CursorPosition {
  at: Date;
  id: string;
}

/**
 * Opaque, tamper-evident list cursors: base64url(JSON position) + "." + HMAC. The
 * signing key is made once per database (migration `constraints`), so cursors outlive
 * restarts and work across instances. Anything not issued here, or altered, is 400
 * `invalid_cursor`.
 */
@Injectable()
export class CursorCodec implements OnModuleInit {
  private key: Buffer;

  constructor(private readonly prisma: PrismaService) {}

  async onModuleInit(): Promise<void> {
    const setting = await this.prisma.serviceSetting.findUniqueOrThrow({ where: { name: 'cursor_signing_key' } });
    this.key = Buffer.from(setting.value, 'hex');
  }

  encode(kind: CursorKind, position: CursorPosition): string {
    return this.sealed([kind, position.at.toISOString(), position.id]);
  }

  /** A cursor after the item whose unique sort key is `key`. */
  encodeKey(kind: KeyCursorKind, key: string): string {
    return this.sealed([kind, key]);
  }

  /** The position a `cursor` query value names; null when none was sent (the first page). */
  positionAfter(kind: CursorKind, cursor: string | undefined): CursorPosition | null {
    if (cursor === undefined) return null;
    const [cursorKind, at, id, ...rest] = this.opened(cursor);
    if (cursorKind !== kind || typeof at !== 'string' || !isInstant(at) || typeof id !== 'string' || !isUuid(id) || rest.length) {
      throw invalidCursor();
    }
    return { at: new Date(at), id };
  }

  /** The key a `cursor` of a KeyCursorKind list names; null when none was sent. */
  keyAfter(kind: KeyCursorKind, cursor: string | undefined): string | null {
    if (cursor === undefined) return null;
    const [cursorKind, key, ...rest] = this.opened(cursor);
    if (cursorKind !== kind || typeof key !== 'string' || !CURSOR_KEY.test(key) || rest.length) throw invalidCursor();
    return key;
  }

  private sealed(values: string[]): string {
    const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** The values of a cursor this service signed; 400 for anything else. */
  private opened(cursor: string): unknown[] {
    const [payload, signature, ...rest] = cursor.split('.');
    if (!payload || !signature || rest.length || !this.verify(payload, signature)) throw invalidCursor();
    try {
      const decoded: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (Array.isArray(decoded)) return decoded;
    } catch {
      // not JSON: refused below
    }
    throw invalidCursor();
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

function invalidCursor() {
  return badRequest('invalid_cursor', 'cursor is not a cursor this service issued, or it was altered', 'cursor');
}
