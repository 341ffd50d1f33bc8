import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { jsonBodyParsing } from './common/http/body-parsing';
import { CORS_PATHS, corsForApi, standardHeaders } from './common/http/browser-edges';
import { answerClientErrorsAsProblems } from './common/http/client-errors';
import { RouteTable } from './common/http/routes';
import { undecodablePathSegmentsAsSent } from './common/http/path-text';
import { queryTextChecking } from './common/http/query-text';
import { requestId } from './common/http/request-id';
import type { AppConfig } from './config/app-config';
import { HttpDrain } from './lifecycle/http-drain';
import { createRootLogger, httpLogger, NestLogger } from './logging/logger';
import { HttpMetrics } from './metrics/http-metrics';
import { setupOpenApi } from './openapi';

// Longer than the idle timeout of common load balancers (60 s): the balancer, not the
// service, closes an idle keep-alive connection, so it never sends a request on a connection
// the service is closing at that moment.
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * Builds the whole application, exactly as it serves clients. main.ts and the tests
 * both use it, so the tests see what clients see. `logDestination` (tests) receives the log
 * lines instead of stdout.
 */
export async function createApp(config: AppConfig, options: { logDestination?: DestinationStream } = {}): Promise<NestExpressApplication> {
  const logger = createRootLogger(config, options.logDestination);
  // Routes match as spelled (/API/v1 is no route): the rules that tell the API and the admin
  // interface apart compare paths so (common/http/surface.ts). Express reads the setting once,
  // when it creates its router, which the adapter's constructor does: so it is set before.
  const expressApp = express().set('case sensitive routing', true);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new ExpressAdapter(expressApp), {
    bodyParser: false,
    logger: new NestLogger(logger),
    // Start-up failures propagate as errors (main.ts prints them) instead of exiting the process.
    abortOnError: false,
  });
  app.disable('x-powered-by');
  app.set('etag', false);
  const server = app.getHttpServer();
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  app.get(HttpDrain).track(server);
  answerClientErrorsAsProblems(server, app.get(RouteTable));
  // In this order, before any route: the id and arrival time first, then what reads them.
  app.use(requestId());
  app.use(app.get(HttpDrain).middleware());
  app.use(httpLogger(logger));
  app.use(app.get(HttpMetrics).middleware());
  // Before anything routes: a path segment the router could not decode reaches its route.
  app.use(undecodablePathSegmentsAsSent());
  app.use(standardHeaders());
  // Before the key check and the body: a preflight is answered here, 204, without a key.
  app.use([...CORS_PATHS], corsForApi(config.corsOrigins));
  app.use(jsonBodyParsing());
  app.use(queryTextChecking());
  setupOpenApi(app);
  await app.init();
  return app;
}
