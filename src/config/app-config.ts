/**
 * The service's configuration, read from the environment once at start and
 * validated there: a bad value stops the start with a message naming the variable.
 */
export interface AppConfig {
  port: number;
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
  /** Emit Prisma query events (the tests count the statements of a request); off in service. */
  emitQueryEvents: boolean;
}

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
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    databaseUrl,
    dataDir: optional(env.DATA_DIR) ?? './data',
    adminToken,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 1200, 1, 10_000_000),
    redisUrl,
    seedDemoProject: true,
    emitQueryEvents: false,
  };
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
