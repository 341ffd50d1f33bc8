import { Logger } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.factory';
import { ConfigError, loadConfig } from './config/app-config';
import { exitGracefullyOnSignals } from './lifecycle/graceful-shutdown';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Configuration error: ${error.message}`);
    process.exit(1);
  }
  const app = await createApp(config);
  const logger = new Logger('Main');
  // An error nothing caught is a bug: written with its stack. A rejection leaves the process
  // serving; an exception leaves it in an unknown state, so it exits.
  process.on('unhandledRejection', (reason) => {
    logger.error(`Unhandled rejection: ${String(reason)}`, reason instanceof Error ? reason.stack : undefined);
  });
  process.on('uncaughtException', (error) => {
    logger.fatal(`Uncaught exception: ${error.message}`, error.stack);
    process.exit(1);
  });
  // SIGTERM, SIGINT: drain, stop the workers, close the database, exit 0 (lifecycle/graceful-shutdown.ts).
  exitGracefullyOnSignals(app, config);
  await app.listen(config.port);
  const { port } = app.getHttpServer().address() as AddressInfo;
  logger.log(`Listening on http://localhost:${port} (API docs at /docs)`);
}

bootstrap().catch((error: Error) => {
  // A start that fails (the database unreachable, a migration refused) ends with its cause.
  new Logger('Main').fatal(`Start-up failed: ${error.message}`, error.stack);
  process.exit(1);
});
