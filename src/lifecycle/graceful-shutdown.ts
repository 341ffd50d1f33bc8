import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from '../config/app-config';
import { DrainState } from './drain-state';
import { HttpDrain } from './http-drain';

/** The share of SHUTDOWN_TIMEOUT_MS the requests in flight get; the rest is for workers and the database. */
const HTTP_SHARE = 0.75;

/**
 * The shutdown of decisions.md section 15: drain (DrainState), then the HTTP server (HttpDrain),
 * then Nest's hooks (workers, the database last). Not enableShutdownHooks: it would close every
 * idle connection at once, first.
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
