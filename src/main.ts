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
  // HOST unset: every interface. HOST=127.0.0.1 keeps a development server to this machine.
  await (config.host === null ? app.listen(config.port) : app.listen(config.port, config.host));
  logger.log(listeningLine(app.getHttpServer().address() as AddressInfo, config.host));
}

/**
 * The start line: the address listened on, as a URL, and one to open. Without HOST (or with a
 * wildcard) that is every interface, which the line says, and the URL to open is localhost's:
 * `http://[::]:3000` is no address a browser opens.
 */
function listeningLine({ address, port }: AddressInfo, host: string | null): string {
  const url = (name: string) => `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
  const everywhere = ['::', '0.0.0.0'].includes(address);
  if (!everywhere) return `Listening on ${url(address)} (API docs at ${url(address)}/docs)`;
  const why = host === null ? 'HOST is unset' : `HOST=${host}`;
  return `Listening on ${url(address)}, every interface (${why}): open ${url('localhost')}/docs in a browser`;
}

bootstrap().catch((error: Error) => {
  // A start that fails (the database unreachable, a migration refused) ends with its cause.
  new Logger('Main').fatal(`Start-up failed: ${error.message}`, error.stack);
  process.exit(1);
});
