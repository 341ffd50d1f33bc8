import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from '../config/app-config';
import { DrainState } from './drain-state';
import { HttpDrain } from './http-drain';

/** The share of SHUTDOWN_TIMEOUT_MS the requests in flight get; the rest is for workers and the database. */
const HTTP_SHARE = 0.75;

/**
 * The shutdown sequence of decisions.md section 15, in this order:
 * 1. draining starts (DrainState): /ready answers 503, answers carry `Connection: close`,
 *    held requests are woken;
 * 2. the HTTP server stops accepting connections, answers what it has received, then closes
 *    the idle connections (HttpDrain), for up to 3/4 of SHUTDOWN_TIMEOUT_MS;
 * 3. Nest's shutdown hooks, through app.close(): onModuleDestroy, then
 *    beforeApplicationShutdown (background workers stop there: their in-flight work ends
 *    or is released), then onApplicationShutdown (PrismaService closes the database, last).
 * Nest's own enableShutdownHooks is not used: it would close the server (and every idle
 * connection with it, at once) before any of this.
 */
export async function shutDownGracefully(app: NestExpressApplication, config: AppConfig, signal: string): Promise<void> {
  const logger = new Logger('Shutdown');
  const startedAt = Date.now();
  logger.log(`${signal} received: draining (at most ${config.shutdownTimeoutMs} ms)`);
  app.get(DrainState).begin(startedAt + config.shutdownTimeoutMs);
  const cut = await app.get(HttpDrain).drain(app.getHttpServer(), startedAt + config.shutdownTimeoutMs * HTTP_SHARE);
  if (cut > 0) logger.warn(`${cut} requests were still running at the drain deadline; their connections were closed`);
  else logger.log(`HTTP server drained in ${Date.now() - startedAt} ms`);
  await app.close();
  logger.log(`Stopped in ${Date.now() - startedAt} ms`);
}

/** main.ts: SIGTERM and SIGINT start the sequence once; the process exits 0 after it, 1 if it overruns SHUTDOWN_TIMEOUT_MS. */
export function exitGracefullyOnSignals(app: NestExpressApplication, config: AppConfig): void {
  let shuttingDown = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (shuttingDown) return;
    shuttingDown = true;
    setTimeout(() => {
      new Logger('Shutdown').error(`Shutdown did not finish within SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs} ms): exiting`);
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    shutDownGracefully(app, config, signal).then(
      () => process.exit(0),
      (error: Error) => {
        new Logger('Shutdown').error(`Shutdown failed: ${error.message}`, error.stack);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
