import type { NestExpressApplication } from '@nestjs/platform-express';
import { appendFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import type { DestinationStream } from 'pino';
import request, { type Test } from 'supertest';
import { createApp } from '../../src/app.factory';
import { AppConfig, defaultAttachmentsDir, loadConfig } from '../../src/config/app-config';
import { PrismaService } from '../../src/database/prisma.service';
import { ANSWER_ID_HEADER, AnswerChecker, OpenApiContract } from './openapi-contract';
import { ADMIN_TOKEN, createTestDatabase, engine, type TestDatabase } from './test-database';

export { ADMIN_TOKEN, createTestDatabase, engine } from './test-database';
export type { TestDatabase } from './test-database';

export interface TestApp {
  app: NestExpressApplication;
  /** Requests whose answers must match /docs/openapi.json (the Test fails otherwise). */
  http: ReturnType<typeof request>;
  /** Checks every answer of the app against the served document, whoever asked. */
  answers: AnswerChecker;
  prisma: PrismaService;
  config: AppConfig;
  close(): Promise<void>;
}

/**
 * The whole application (createApp, as main.ts builds it) on a database of its own:
 * an in-memory PGlite, or a fresh PostgreSQL database (already migrated, createTestDatabase)
 * dropped again by close().
 * Every answer it gives is checked against the OpenAPI document it serves (AnswerChecker):
 * a request made through `http` fails on its own answer; any other (fetch, a child
 * process) fails the close() at the end of the file.
 */
export async function startTestApp(
  overrides: Partial<AppConfig> = {},
  database?: TestDatabase,
  options: { logDestination?: DestinationStream } = {},
): Promise<TestApp> {
  database ??= await createTestDatabase({ migrated: true });
  const config: AppConfig = {
    // The defaults a deployment gets from an empty environment, then the test's own.
    ...loadConfig({}),
    port: 0,
    databaseUrl: database.url,
    dataDir: 'memory://',
    // A directory of its own (not ./data/attachments): files run at once, and each sweeps its store.
    attachmentsDir: defaultAttachmentsDir('memory://'),
    adminToken: ADMIN_TOKEN,
    rateLimitPerMinute: 1_000_000,
    redisUrl: null,
    seedDemoProject: false,
    observeStatements: true,
    // Quiet by default; TEST_LOG_LEVEL=debug (or info, error...) shows the service's log lines.
    logLevel: (process.env.TEST_LOG_LEVEL as AppConfig['logLevel'] | undefined) ?? 'silent',
    ...overrides,
  };
  const app = await createApp(config, options);
  const server = app.getHttpServer() as Server;
  const document = (await request(server).get('/docs/openapi.json').expect(200)).body;
  const answers = new AnswerChecker(server, OpenApiContract.of(document));
  return {
    app,
    http: checkedRequests(server, answers),
    answers,
    prisma: app.get(PrismaService),
    config,
    close: async () => {
      await app.close();
      await database!.drop();
      if (overrides.attachmentsDir === undefined) await rm(config.attachmentsDir, { recursive: true, force: true });
      reportCheckedAnswers(answers);
      if (answers.unclaimedFailures.length) {
        throw new Error(`Answers to requests made outside t.http break /docs/openapi.json:\n  ${answers.unclaimedFailures.join('\n  ')}`);
      }
    },
  };
}

/**
 * The app of a test file (or of a describe block): started in a beforeAll, closed in an afterAll,
 * so that a file's set-up is one line, `const t = useTestApp()`. The object answers for the app
 * once it has started; used before that (at the top level of a describe), it throws.
 */
export function useTestApp(overrides: Partial<AppConfig> = {}, options: { logDestination?: DestinationStream } = {}): TestApp {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp(overrides, undefined, options);
  });
  afterAll(() => app?.close());
  return startedLater(() => app, 'useTestApp(): the app starts in beforeAll; use it inside a test or a hook');
}

/** An object that stands for `get()`'s value once there is one (set in a beforeAll). */
export function startedLater<T extends object>(get: () => T | undefined, notYet: string): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const value = get();
      if (value === undefined) throw new Error(notYet);
      const property: unknown = Reflect.get(value, key);
      return typeof property === 'function' ? (property as (...args: unknown[]) => unknown).bind(value) : property;
    },
  });
}

/** supertest on the app's server, each request failing when its answer breaks the document. */
function checkedRequests(server: Server, answers: AnswerChecker): ReturnType<typeof request> {
  const http = request(server);
  let sent = 0;
  for (const method of ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const) {
    const create = http[method].bind(http) as (url: string) => Test;
    (http as unknown as Record<string, (url: string) => Test>)[method] = (url) => {
      const answerId = String(++sent);
      return create(url)
        .set(ANSWER_ID_HEADER, answerId)
        .expect(() => {
          const verdict = answers.verdictFor(answerId);
          if (!verdict) throw new Error(`${method.toUpperCase()} ${url}: the server checked no answer for this request`);
          if (verdict.errors.length) throw new Error(`The answer breaks /docs/openapi.json:\n  ${verdict.errors.join('\n  ')}`);
        });
    };
  }
  return http;
}

/** Counts for test/support/openapi-contract-reporter.js, which prints the run's totals. */
function reportCheckedAnswers(answers: AnswerChecker): void {
  const directory = process.env.OPENAPI_CONTRACT_REPORT_DIR;
  if (!directory) return;
  const file = path.relative(path.join(__dirname, '..', '..'), expect.getState().testPath ?? 'unknown');
  appendFileSync(path.join(directory, `${process.pid}.jsonl`), `${JSON.stringify({ engine, file, ...answers.counts })}\n`);
}
