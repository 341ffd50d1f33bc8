import { LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { jsonBodyParsing } from './common/http/body-parsing';
import { requestId } from './common/http/request-id';
import type { AppConfig } from './config/app-config';
import { setupOpenApi } from './openapi';

/**
 * Builds the whole application, exactly as it serves clients. main.ts and the tests
 * both use it, so the tests see what clients see.
 */
export async function createApp(config: AppConfig, options: { logger?: LogLevel[] | false } = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    logger: options.logger,
    // Start-up failures propagate as errors (main.ts prints them) instead of exiting the process.
    abortOnError: false,
  });
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId());
  app.use(jsonBodyParsing());
  setupOpenApi(app);
  await app.init();
  return app;
}
