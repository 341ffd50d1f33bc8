import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/**
 * The service's configuration, read from the environment once at start and
 * validated there: a bad value stops the start with a message naming the variable.
 */
export interface AppConfig {
  port: number;
  /** The address to listen on; null: every interface (as servers in containers need). */
  host: string | null;
  /** The origins whose pages may call /api/v1 (CORS); null: any origin. */
  corsOrigins: string[] | null;
  /** postgresql:// URL; when absent the embedded PGlite database is used. */
  databaseUrl: string | null;
  /** Where PGlite keeps its files; `memory://` keeps them in memory (tests). */
  dataDir: string;
  /** Enables /admin/v1 when set. */
  adminToken: string | null;
  rateLimitPerMinute: number;
  /** Shares the rate-limit counters between instances when set. */
  redisUrl: string | null;
  /** Create a demo project and print its key on a new embedded database. */
  seedDemoProject: boolean;
  /** Report every statement to PrismaService.onStatement (the tests count the statements of a request); off in service. */
  observeStatements: boolean;
  /** How long a stored answer of an Idempotency-Key is replayed (decisions.md section 11). */
  idempotencyTtlHours: number;
  /** Events older than this many days are removed; null keeps them forever (section 13). */
  eventRetentionDays: number | null;
  /** How often an event stream sends its keep-alive comment (decisions.md section 20: 15 s; shorter in tests). */
  eventStreamKeepAliveMs: number;
  /** A stream whose client leaves this much unsent is cut off (8 MiB; not set from the environment, smaller in tests). */
  eventStreamMaxUnreadBytes: number;
  /** A webhook attempt that has not answered 2xx within this is a failed attempt (section 14). */
  webhookTimeoutMs: number;
  /** Delays after each failed attempt, in ms; after the last one the delivery is failed. */
  webhookRetrySchedule: number[];
  /** Allow http:// and private, loopback and link-local webhook targets (development and tests). */
  webhookAllowPrivateUrls: boolean;
  /** The least severe level written: `info` by default (section 15 of decisions.md). */
  logLevel: LogLevel;
  /** `json`: one JSON object per line; `pretty`: coloured lines for a person (needs pino-pretty). */
  logFormat: 'json' | 'pretty';
  /** On SIGTERM or SIGINT, the whole shutdown (drain, workers, database) ends within this many ms. */
  shutdownTimeoutMs: number;
  /** The service's own base URL (scheme, host, port, no path) for absolute links such as an attachment's downloadUrl; null: the request's own. */
  publicUrl: string | null;
  /** An upload larger than this is 413 attachment_too_large (decisions.md section 24: 25 MiB). */
  attachmentMaxBytes: number;
  /** A project's live and trashed attachments may hold at most this many bytes (1 GiB). */
  attachmentQuotaBytes: number;
  /** Where the directory store keeps attachments' bytes (default `<DATA_DIR>/attachments`, a temporary directory for `memory://`). */
  attachmentsDir: string;
  /** Bytes without a row (a crash between commit and removal, an upload that never committed) are removed once older than this (1 hour). */
  attachmentOrphanAgeMs: number;
  /** How often the sweeper looks for such bytes (10 minutes). */
  attachmentSweepIntervalMs: number;
  /** When set, attachments' bytes live in this S3 bucket (docs/attachment-storage.md); credentials from the usual AWS variables. */
  s3Bucket: string | null;
  /** An S3-compatible endpoint (MinIO, Ceph, R2...) as an http(s) URL; null: AWS S3 itself. */
  s3Endpoint: string | null;
  /** S3_REGION, else AWS_REGION, else us-east-1 (what most S3-compatible stores accept). */
  s3Region: string;
  /** Bucket in the path (`endpoint/bucket/key`) rather than in the host name, as MinIO and most local stores need. */
  s3ForcePathStyle: boolean;
}

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {}

export const APP_CONFIG = Symbol('APP_CONFIG');

export function loadConfig(env: NodeJS.ProcessEnv): AppConfig {
  const databaseUrl = optional(env.DATABASE_URL);
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgresql:// URL (unset it to use the embedded database)');
  }
  const redisUrl = optional(env.REDIS_URL);
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must be a redis:// URL');
  }
  // Any value enables the admin interface (decisions.md section 8); choosing a long random
  // one is the operator's part (README).
  const adminToken = optional(env.ADMIN_TOKEN);
  const logLevel = optional(env.LOG_LEVEL) ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const logFormat = optional(env.LOG_FORMAT) ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'pretty') throw new ConfigError(`LOG_FORMAT must be json or pretty, got "${logFormat}"`);
  if (logFormat === 'pretty' && !isInstalled('pino-pretty')) {
    // A development dependency: a production install (npm install --omit=dev) has JSON logs only.
    throw new ConfigError('LOG_FORMAT=pretty needs the pino-pretty package, a development dependency (npm install)');
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: optional(env.HOST),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    databaseUrl,
    dataDir: optional(env.DATA_DIR) ?? './data',
    adminToken,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 1200, 1, 10_000_000),
    redisUrl,
    seedDemoProject: true,
    observeStatements: false,
    idempotencyTtlHours: integer(env, 'IDEMPOTENCY_TTL_HOURS', 24, 1, 24 * 365),
    eventRetentionDays: optional(env.EVENT_RETENTION_DAYS) === null ? null : integer(env, 'EVENT_RETENTION_DAYS', 0, 1, 100_000),
    eventStreamKeepAliveMs: integer(env, 'EVENT_STREAM_KEEP_ALIVE_MS', 15_000, 100, 600_000),
    eventStreamMaxUnreadBytes: 8 * 1024 * 1024,
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
    webhookRetrySchedule: durations(env, 'WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h'),
    webhookAllowPrivateUrls: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
    logLevel: logLevel as LogLevel,
    logFormat,
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 1_000, 600_000),
    publicUrl: publicUrl(env, 'PUBLIC_URL'),
    attachmentMaxBytes: integer(env, 'ATTACHMENT_MAX_BYTES', 26_214_400, 1, 2_147_483_647),
    attachmentQuotaBytes: integer(env, 'ATTACHMENT_QUOTA_BYTES', 1_073_741_824, 1, Number.MAX_SAFE_INTEGER),
    attachmentsDir: optional(env.ATTACHMENTS_DIR) ?? defaultAttachmentsDir(optional(env.DATA_DIR) ?? './data'),
    attachmentOrphanAgeMs: 3_600_000,
    attachmentSweepIntervalMs: 10 * 60_000,
    ...s3(env),
  };
}

/** `<DATA_DIR>/attachments`; an in-memory database keeps its attachments in a temporary directory of its own. */
export function defaultAttachmentsDir(dataDir: string): string {
  if (dataDir.startsWith('memory://')) return path.join(os.tmpdir(), `planning-attachments-${randomUUID()}`);
  return path.join(dataDir, 'attachments');
}

/** An absolute http(s) base URL without path, query or fragment (a trailing / is dropped), or null when unset. */
function publicUrl(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = optional(env[name]);
  if (raw === null) return null;
  let parsed: URL | null = null;
  try {
    parsed = new URL(raw);
  } catch {
    // reported below
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== raw.replace(/\/$/, '')) {
    throw new ConfigError(`${name} must be the service's base URL such as https://tasks.example.com (scheme, host and port, no path), got "${raw}"`);
  }
  return parsed.origin;
}

/** The S3 keys, checked together: an endpoint, region or path style without a bucket would be silently unused. */
function s3(env: NodeJS.ProcessEnv): Pick<AppConfig, 's3Bucket' | 's3Endpoint' | 's3Region' | 's3ForcePathStyle'> {
  const s3Bucket = optional(env.S3_BUCKET);
  // S3's naming rules (3 to 63 lower-case letters, digits, dots and hyphens), so a typo fails here, not at the first upload.
  if (s3Bucket !== null && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s3Bucket)) {
    throw new ConfigError(`S3_BUCKET must be an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens), got "${s3Bucket}"`);
  }
  const s3Endpoint = optional(env.S3_ENDPOINT);
  if (s3Endpoint !== null && !/^https?:\/\/[^/?#\s]+\/?$/.test(s3Endpoint)) {
    throw new ConfigError(`S3_ENDPOINT must be an http(s) URL without a path, such as http://127.0.0.1:9000, got "${s3Endpoint}"`);
  }
  const s3Region = optional(env.S3_REGION) ?? optional(env.AWS_REGION) ?? 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(s3Region)) throw new ConfigError(`S3_REGION must be a region name such as eu-west-1, got "${s3Region}"`);
  const s3ForcePathStyle = boolean(env, 'S3_FORCE_PATH_STYLE', false);
  if (s3Bucket === null) {
    const stray = ['S3_ENDPOINT', 'S3_REGION', 'S3_FORCE_PATH_STYLE'].find((name) => optional(env[name]) !== null);
    if (stray) throw new ConfigError(`${stray} is set but S3_BUCKET is not: set S3_BUCKET to store attachments in S3, or unset ${stray}`);
  }
  return { s3Bucket, s3Endpoint, s3Region, s3ForcePathStyle };
}

function isInstalled(packageName: string): boolean {
  try {
    require.resolve(packageName);
    return true;
  } catch {
    return false;
  }
}

function optional(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env[name]);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A comma-separated list of durations such as `5s,5m,2h` (units ms, s, m, h, d), in ms. */
function durations(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const raw = optional(env[name]) ?? fallback;
  return raw.split(',').map((item) => {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(item.trim());
    if (!match) throw new ConfigError(`${name} must be a comma-separated list of durations such as 5s,5m,2h (units ms, s, m, h, d), got "${raw}"`);
    return Number(match[1]) * DURATION_UNITS_MS[match[2]];
  });
}

/** A comma-separated list of origins (`https://app.example.com`, scheme, host and port only), or null when unset. */
function origins(env: NodeJS.ProcessEnv, name: string): string[] | null {
  const raw = optional(env[name]);
  if (raw === null) return null;
  return raw.split(',').map((item) => {
    const origin = item.trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || parsed.origin !== origin) {
      throw new ConfigError(
        `${name} must be a comma-separated list of origins such as https://app.example.com (no path, no trailing /), got "${origin}"`,
      );
    }
    return origin;
  });
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = optional(env[name]);
  if (raw === null) return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  return raw === 'true';
}
