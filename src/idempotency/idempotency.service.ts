import { HttpStatus, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';
import { violates } from '../common/errors/database-errors';
import { Problem } from '../common/errors/problem';
import { answerBody } from '../common/http/entity-tag';
import { JSON_CONTENT_TYPE } from '../common/http/json-text';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PrismaService } from '../database/prisma.service';
import { inBatches, tryLockStatement } from '../database/sql';
import { Prisma } from '../generated/prisma/client';

/** What a write answered, as it is stored and replayed. */
interface StoredAnswer {
  fingerprint: string;
  status: number;
  headers: { location?: string; etag?: string };
  body: string;
  /** false once expired: replayed no more, replaced by the next answer under its key. */
  live: boolean;
}

/** How often expired answers are looked for, and how many one statement removes. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;
const SWEEP_BATCH = 1000;

/**
 * Idempotency-Key (decisions.md section 11): the write joins a transaction opened here, which
 * stores its 2xx answer, so neither commits without the other. Twins never both run: refused in
 * this process at once, across instances by an advisory lock tried without waiting; a busy key
 * that already has an answer replays it, so only a twin of a running request gets 409.
 */
@Injectable()
export class IdempotencyService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(IdempotencyService.name);
  private readonly inFlight = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const sweep = () =>
      void this.removeExpired().catch((error: Error) => this.logger.warn(`Removing expired idempotent answers failed: ${error.message}`));
    this.timer = setInterval(sweep, SWEEP_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /**
   * Runs `write` for the API key `keyId` under `idempotencyKey`, or replays what it answered
   * before. Answers the body to send (a string), with the status and headers set on `response`.
   */
  async run(
    keyId: string,
    idempotencyKey: string,
    fingerprint: string,
    response: Response,
    write: () => Promise<unknown>,
  ): Promise<string | undefined> {
    const slot = `${keyId}:${idempotencyKey}`;
    if (this.inFlight.has(slot)) {
      const [stored] = await this.prisma.sql.$queryRaw<StoredAnswer[]>(lookUp(keyId, idempotencyKey));
      if (stored?.live) return replay(stored, fingerprint, response);
      throw inProgress();
    }
    this.inFlight.add(slot);
    try {
      return await this.prisma.write(async (tx) => {
        // The key's lock without waiting, then, in a statement of its own (sent with it), the look-up:
        // it starts after the lock is taken, so it sees the answer of a twin that held the lock.
        const [[{ locked }], [stored]] = await tx.pipeline<[{ locked: boolean }[], StoredAnswer[]]>(
          tryLockStatement(`idempotency:${slot}`),
          lookUp(keyId, idempotencyKey),
        );
        if (stored?.live) return replay(stored, fingerprint, response);
        if (!locked) throw inProgress();

        const result = await PrismaService.withinTransaction(tx, write);
        const body = result === undefined ? '' : answerBody(result);
        if (body !== '') response.setHeader('Content-Type', JSON_CONTENT_TYPE);
        if (response.statusCode >= 200 && response.statusCode < 300) {
          const headers = { location: header(response, 'Location'), etag: header(response, 'ETag') };
          const expiresAt = new Date(Date.now() + this.config.idempotencyTtlHours * 3_600_000).toISOString();
          // The answer goes out with the COMMIT (SqlTransaction.finish): this transaction may hold
          // the project's event numbers (ChangeLog), which every write of the project waits for.
          // An expired answer not yet swept away is removed first. A live one cannot be there (the
          // lock and the look-up above); if it were, the insert fails and the change rolls back.
          const removeExpired = Prisma.sql`
            DELETE FROM idempotent_requests WHERE key_id = ${keyId}::uuid AND idempotency_key = ${idempotencyKey} AND expires_at <= now()`;
          try {
            await tx.finish(
              ...(stored ? [removeExpired] : []),
              Prisma.sql`INSERT INTO idempotent_requests (key_id, idempotency_key, fingerprint, status, headers, body, expires_at)
                         VALUES (${keyId}::uuid, ${idempotencyKey}, ${fingerprint}, ${response.statusCode}, ${JSON.stringify(headers)}::json,
                                 ${body}, ${expiresAt}::timestamptz)`,
            );
          } catch (error) {
            if (violates(error, 'idempotent_requests_pkey')) throw inProgress();
            throw error;
          }
        }
        return body === '' ? undefined : body;
      });
    } finally {
      this.inFlight.delete(slot);
    }
  }

  /** Removes the answers kept longer than IDEMPOTENCY_TTL_HOURS, in batches; answers how many. */
  async removeExpired(): Promise<number> {
    return inBatches(
      SWEEP_BATCH,
      () =>
        this.prisma.sql.$executeRaw`
        DELETE FROM idempotent_requests
         WHERE (key_id, idempotency_key) IN (SELECT key_id, idempotency_key FROM idempotent_requests WHERE expires_at <= now() LIMIT ${SWEEP_BATCH})`,
    );
  }
}

/** The answer stored for an API key's Idempotency-Key, if any, live or expired. */
function lookUp(keyId: string, idempotencyKey: string): Prisma.Sql {
  return Prisma.sql`
    SELECT fingerprint, status, headers, body, expires_at > now() AS live FROM idempotent_requests
     WHERE key_id = ${keyId}::uuid AND idempotency_key = ${idempotencyKey}`;
}

/** The stored answer again, byte for byte, or 422 when the key was used for another request. */
function replay(stored: StoredAnswer, fingerprint: string, response: Response): string | undefined {
  if (stored.fingerprint !== fingerprint) {
    throw new Problem(
      HttpStatus.UNPROCESSABLE_ENTITY,
      'idempotency_key_reused',
      'This Idempotency-Key was used for another request (method, path or body differ): use a new key for a new request',
    );
  }
  response.status(stored.status);
  if (stored.headers.location) response.setHeader('Location', stored.headers.location);
  if (stored.headers.etag) response.setHeader('ETag', stored.headers.etag);
  response.setHeader('Idempotent-Replayed', 'true');
  if (stored.body === '') return undefined;
  response.setHeader('Content-Type', JSON_CONTENT_TYPE);
  return stored.body;
}

function inProgress(): Problem {
  return new Problem(
    HttpStatus.CONFLICT,
    'idempotency_in_progress',
    'A request with this Idempotency-Key is still running: retry after it has been answered',
    undefined,
    {},
    { 'Retry-After': '1' },
  );
}

function header(response: Response, name: string): string | undefined {
  const value = response.getHeader(name);
  return typeof value === 'string' ? value : undefined;
}
