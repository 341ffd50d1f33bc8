import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app.factory';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { PrismaService } from '../../src/database/prisma.service';
import { ADMIN_TOKEN, createTestDatabase, type TestDatabase } from './test-database';

export { ADMIN_TOKEN, createTestDatabase, engine } from './test-database';
export type { TestDatabase } from './test-database';

export interface TestApp {
  app: NestExpressApplication;
  http: ReturnType<typeof request>;
  prisma: PrismaService;
  config: AppConfig;
  close(): Promise<void>;
}

/**
 * The whole application (createApp, as main.ts builds it) on a database of its own:
 * an in-memory PGlite, or a fresh PostgreSQL database dropped again by close().
 */
export async function startTestApp(
  overrides: Partial<AppConfig> = {},
  database?: TestDatabase,
  options: { logDestination?: DestinationStream } = {},
): Promise<TestApp> {
  database ??= await createTestDatabase();
  const config: AppConfig = {
    // The defaults a deployment gets from an empty environment, then the test's own.
    ...loadConfig({}),
    port: 0,
    databaseUrl: database.url,
    dataDir: 'memory://',
    adminToken: ADMIN_TOKEN,
    rateLimitPerMinute: 1_000_000,
    redisUrl: null,
    seedDemoProject: false,
    emitQueryEvents: true,
    // Quiet by default; TEST_LOG_LEVEL=debug (or info, error...) shows the service's log lines.
    logLevel: (process.env.TEST_LOG_LEVEL as AppConfig['logLevel'] | undefined) ?? 'silent',
    logFormat: 'json',
    shutdownTimeoutMs: 10_000,
    ...overrides,
  };
  const app = await createApp(config, options);
  return {
    app,
    http: request(app.getHttpServer()),
    prisma: app.get(PrismaService),
    config,
    close: async () => {
      await app.close();
      await database!.drop();
    },
  };
}
