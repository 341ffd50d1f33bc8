import { Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { ConfigError, loadConfig } from './config/app-config';

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
  // SIGTERM: Nest closes the HTTP server first (no new connections, the requests in
  // flight finish), then runs the shutdown hooks (PrismaService closes the database).
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(config.port);
  new Logger('Main').log(`Listening on http://localhost:${config.port} (API docs at /docs)`);
}

void bootstrap();
