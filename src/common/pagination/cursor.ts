import { Injectable, OnModuleInit } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../errors/problem';
import { isInstant } from '../dates';
import { isUuid } from '../ids';
import { PrismaService } from '../../database/prisma.service';

/** Which list a cursor belongs to: a cursor of one list is refused by the others. */
export type CursorKind = 'tasks' | 'trash' | 'history' | 'webhook_deliveries';

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
    const payload = Buffer.from(JSON.stringify([kind, position.at.toISOString(), position.id])).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** The position a `cursor` query value names; null when none was sent (the first page). */
  positionAfter(kind: CursorKind, cursor: string | undefined): CursorPosition | null {
    return cursor === undefined ? null : this.decode(kind, cursor);
  }

  private decode(kind: CursorKind, cursor: string): CursorPosition {
    const [payload, signature, ...rest] = cursor.split('.');
    if (!payload || !signature || rest.length || !this.verify(payload, signature)) throw invalidCursor();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    if (!Array.isArray(decoded) || decoded.length !== 3) throw invalidCursor();
    const [cursorKind, at, id] = decoded as unknown[];
    if (cursorKind !== kind || typeof at !== 'string' || !isInstant(at) || typeof id !== 'string' || !isUuid(id)) {
      throw invalidCursor();
    }
    return { at: new Date(at), id };
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
