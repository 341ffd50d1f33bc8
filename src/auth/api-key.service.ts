import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { Problem } from '../common/errors/problem';
import { PrismaService } from '../database/prisma.service';
import { hashApiKey, hasKeyShape } from './api-keys';
import { bearerToken } from './bearer-token';
import type { Caller } from './caller';
import type { Permission } from './permissions';

// lastUsedAt is a hint for people managing keys, not an audit log: one write per key
// per minute keeps it off the hot path.
const LAST_USED_RESOLUTION_MS = 60_000;

/** Hashes remembered as naming no live key (ApiKeyService.lookUp): past this, the one seen longest ago is forgotten. */
const REMEMBERED_DEAD_KEYS = 10_000;

/** A request's key, each part worked out once: its hash (null without a Bearer key), and its look-up. */
interface RequestKey {
  keyHash: string | null;
  caller?: Promise<Caller | null>;
}

@Injectable()
export class ApiKeyService {
  private readonly logger = new Logger(ApiKeyService.name);
  private readonly lastUsedWrites = new Map<string, number>();
  private readonly requestKeys = new WeakMap<Request, RequestKey>();
  /**
   * Hashes recently found dead (unknown or revoked), which never come alive (revocation is final,
   * new secrets are random): a token sent again costs no query.
   */
  private readonly deadKeyHashes = new Set<string>();

  constructor(private readonly prisma: PrismaService) {}

  /**
   * The caller behind the request's bearer key. Looked up by hash on every request,
   * so a revoked key stops working at once.
   */
  async authenticate(request: Request): Promise<Caller> {
    if (!request.headers.authorization) throw unauthenticated('Send your key as Authorization: Bearer <key>');
    if (!this.keyHashOf(request)) throw unauthenticated('The Authorization header must be Bearer <key>');
    const caller = await this.liveKeyOf(request);
    if (!caller) throw unauthenticated('Unknown or revoked key');
    return caller;
  }

  /**
   * The live key the request's bearer key names, or null (no key, an unknown or a revoked one).
   * Looked up once per request: the rate limit reads it first, to count the request against the
   * key or against its address (RateLimitGuard), then authenticate() does.
   */
  liveKeyOf(request: Request): Promise<Caller | null> {
    const requestKey = this.requestKeyOf(request);
    return (requestKey.caller ??= this.lookUp(requestKey.keyHash));
  }

  /** The hash of the request's bearer key, or null without one. */
  keyHashOf(request: Request): string | null {
    return this.requestKeyOf(request).keyHash;
  }

  private requestKeyOf(request: Request): RequestKey {
    let requestKey = this.requestKeys.get(request);
    if (!requestKey) {
      const token = bearerToken(request);
      requestKey = { keyHash: token === null ? null : hashApiKey(token) };
      // A token without the shape of a key names none: no look-up.
      if (token !== null && !hasKeyShape(token)) requestKey.caller = Promise.resolve(null);
      this.requestKeys.set(request, requestKey);
    }
    return requestKey;
  }

  private async lookUp(secretHash: string | null): Promise<Caller | null> {
    if (!secretHash) return null;
    if (this.deadKeyHashes.delete(secretHash)) {
      this.deadKeyHashes.add(secretHash);
      return null;
    }
    // Raw SQL on purpose: this runs before every request, and a model query would first go
    // through Prisma's query compiler, a visible share of a list request's CPU (README.md,
    // Performance); prepared, so that it is not parsed and planned again each time.
    const [key] = await this.prisma.preparedSql.$queryRaw<{ id: string; projectId: string; name: string; permissions: string[]; revoked: boolean }[]>`
      SELECT id, project_id AS "projectId", name, permissions, revoked_at IS NOT NULL AS revoked
        FROM api_keys WHERE secret_hash = ${secretHash}`;
    if (!key || key.revoked) {
      this.deadKeyHashes.add(secretHash);
      if (this.deadKeyHashes.size > REMEMBERED_DEAD_KEYS) this.deadKeyHashes.delete(this.deadKeyHashes.values().next().value!);
      return null;
    }
    this.recordUse(key.id);
    return {
      projectId: key.projectId,
      keyId: key.id,
      keyName: key.name,
      permissions: new Set(key.permissions as Permission[]),
      actor: `${key.name} (API)`,
    };
  }

  private recordUse(keyId: string): void {
    const now = Date.now();
    if (now - (this.lastUsedWrites.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWrites.set(keyId, now);
    this.prisma.apiKey
      .update({ where: { id: keyId }, data: { lastUsedAt: new Date(now) }, select: { id: true } })
      .catch((error: Error) => this.logger.warn(`Could not record the use of key ${keyId}: ${error.message}`));
  }
}

function unauthenticated(detail: string): Problem {
  return new Problem(HttpStatus.UNAUTHORIZED, 'unauthenticated', detail);
}
