import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { createApp } from '../../src/app.factory';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { PrismaService } from '../../src/database/prisma.service';

/** Set per Jest project (jest.config.js): every test file runs on both engines. */
declare const TEST_DATABASE_ENGINE: 'pglite' | 'postgresql';
export const engine = TEST_DATABASE_ENGINE;

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
const POSTGRES_URL = process.env.TEST_POSTGRES_URL || 'postgresql://root@127.0.0.1:5432/test';

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
export async function startTestApp(overrides: Partial<AppConfig> = {}, database?: TestDatabase): Promise<TestApp> {
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
    ...overrides,
  };
  const app = await createApp(config, { logger: ['error', 'warn'] });
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

export interface TestDatabase {
  /** null for PGlite */
  url: string | null;
  /** Runs one statement on the server with the database's name for `$database` (PostgreSQL). */
  alter(sql: string): Promise<void>;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (engine === 'pglite') {
    return { url: null, alter: () => Promise.reject(new Error('PGlite has no server to alter')), drop: async () => undefined };
  }
  const name = `tasks_test_${randomBytes(6).toString('hex')}`;
  await withServer((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    alter: (sql) => withServer((client) => client.query(sql.replaceAll('$database', name))).then(() => undefined),
    drop: () => withServer((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

async function withServer<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
