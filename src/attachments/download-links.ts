import { HttpStatus, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { Problem } from '../common/errors/problem';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { PrismaService } from '../database/prisma.service';
import { statement } from '../database/sql';
import { Prisma } from '../generated/prisma/client';

/** How long a downloadUrl works (decisions.md section 24). */
export const DOWNLOAD_URL_LIFETIME_MS = 15 * 60_000;
const SECRET_NAME = 'attachment_download_urls';

/** The key-less route of a downloadUrl (attachment-downloads.controller.ts). */
export const DOWNLOAD_PATH = '/api/v1/attachment-downloads';

/**
 * downloadUrl (decisions.md section 24): `<base>/api/v1/attachment-downloads/<id>?expires=<ms>&signature=<hmac>`,
 * an HMAC-SHA256 over the attachment's id and the expiry with a secret kept in the database
 * (service_secrets), made by the first instance that starts and read by every other: a URL one
 * instance signs, any instance serves.
 */
@Injectable()
export class DownloadLinks implements OnApplicationBootstrap {
  private secret: Buffer | undefined;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // The first INSERT wins; every instance then reads the one secret.
    const made = randomBytes(32).toString('base64url');
    const [row] = await this.prisma.sql.rows(
      statement<{ value: string }>(Prisma.sql`
        WITH made AS (INSERT INTO service_secrets (name, value) VALUES (${SECRET_NAME}, ${made}) ON CONFLICT (name) DO NOTHING RETURNING value)
        SELECT value FROM made UNION ALL SELECT value FROM service_secrets WHERE name = ${SECRET_NAME} LIMIT 1`),
    );
    this.secret = Buffer.from(row.value, 'base64url');
  }

  /** The link for `attachmentId` as an answer made now carries it, on PUBLIC_URL or the request's own scheme and host. */
  linkFor(req: Request, attachmentId: string, now = Date.now()): { downloadUrl: string; downloadUrlExpiresAt: string } {
    const expires = now + DOWNLOAD_URL_LIFETIME_MS;
    const base = this.config.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
    const query = new URLSearchParams({ expires: String(expires), signature: this.sign(attachmentId, expires) });
    return { downloadUrl: `${base}${DOWNLOAD_PATH}/${attachmentId}?${query}`, downloadUrlExpiresAt: new Date(expires).toISOString() };
  }

  /** Throws 403 forbidden, saying nothing of why, unless `expires` and `signature` are the ones this service signed for `attachmentId` and have not expired. */
  verify(attachmentId: string, query: Record<string, unknown>): void {
    const { expires, signature } = query;
    const keys = Object.keys(query).sort().join(',');
    const valid =
      keys === 'expires,signature' &&
      typeof expires === 'string' &&
      typeof signature === 'string' &&
      /^\d{1,15}$/.test(expires) &&
      Number(expires) > Date.now() &&
      equal(signature, this.sign(attachmentId, Number(expires)));
    if (!valid)
      throw new Problem(
        HttpStatus.FORBIDDEN,
        'forbidden',
        'This download link is not valid: ask the API for a new one (the attachment’s downloadUrl)',
      );
  }

  private sign(attachmentId: string, expires: number): string {
    if (!this.secret) throw new Error('DownloadLinks used before the application started');
    return createHmac('sha256', this.secret).update(`${attachmentId.toLowerCase()}.${expires}`).digest('base64url');
  }
}

function equal(sent: string, expected: string): boolean {
  const [a, b] = [Buffer.from(sent), Buffer.from(expected)];
  return a.length === b.length && timingSafeEqual(a, b);
}
