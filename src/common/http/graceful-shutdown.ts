import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';

const DRAIN_TIMEOUT_MS = 10_000;

/**
 * On SIGTERM, before the database closes: stop accepting connections and let the
 * requests in flight finish (at most DRAIN_TIMEOUT_MS), so none fails half-way.
 */
@Injectable()
export class GracefulShutdown implements BeforeApplicationShutdown {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  async beforeApplicationShutdown(): Promise<void> {
    const server: Server | undefined = this.adapterHost.httpAdapter?.getHttpServer();
    if (!server?.listening) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
  }
}
