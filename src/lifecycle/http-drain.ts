import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { DrainState } from './drain-state';

/** How long an idle keep-alive connection stays open once draining starts: a request already on its way is answered, not reset. */
const IDLE_GRACE_MS = 1_000;

/** The HTTP side of a graceful shutdown: no connection a client may be using is reset (decisions.md section 15). */
@Injectable()
export class HttpDrain implements BeforeApplicationShutdown {
  private readonly inFlight = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  /** Answers that stay open until their client leaves (event streams), and how to end each. */
  private readonly heldOpen = new Map<ServerResponse, () => void>();
  private server: Server | null = null;
  /** app.close() has begun: an answer that would stay open ends at once. */
  private closing = false;

  constructor(private readonly drainState: DrainState) {
    // Registered first, so it runs before any other module reacts to draining: an answer
    // another module sends at once (a held long poll) already carries Connection: close.
    drainState.signal.addEventListener('abort', () => this.closeAfterAnswers(), { once: true });
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Middleware, first of all: counts the request in flight until its answer is done, and asks for `Connection: close` while draining. */
  middleware(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      this.inFlight.add(res);
      res.once('close', () => this.inFlight.delete(res));
      if (this.drainState.isDraining) res.setHeader('Connection', 'close');
      // A server closed without the drain (app.close() alone, as the tests do) waits for every
      // connection to end: one that finishes an answer then is not kept alive for nothing.
      const socket = req.socket;
      res.once('finish', () => {
        if (this.server && !this.server.listening) socket.end();
      });
      next();
    };
  }

  /** An answer open until its client leaves (an event stream): `end` is called when draining starts; answers how to forget it. */
  holdOpen(res: ServerResponse, end: () => void): () => void {
    if (this.drainState.isDraining || this.closing) {
      end();
      return () => undefined;
    }
    this.heldOpen.set(res, end);
    return () => this.heldOpen.delete(res);
  }

  /** Follows the server's connections (call once, before it listens). */
  track(server: Server): void {
    this.server = server;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Answers every request already received, closes idle connections after IDLE_GRACE_MS; answers how many were cut at `cutOffAt`. */
  async drain(server: Server, cutOffAt: number): Promise<number> {
    // net.Server#close only: http.Server#close (Node 19+) also destroys the idle keep-alive
    // connections at once, racing with a request a client may be sending on one of them.
    NetServer.prototype.close.call(server);
    const closeIdleFrom = Math.min(Date.now() + IDLE_GRACE_MS, cutOffAt);
    while (this.sockets.size > 0 && Date.now() < cutOffAt) {
      if (Date.now() >= closeIdleFrom) this.closeIdleConnections();
      await sleep(10);
    }
    const cut = this.inFlight.size;
    if (this.sockets.size > 0) server.closeAllConnections();
    return cut;
  }

  /** app.close() with or without the drain: Nest's server.close() would wait for streams and silent connections. */
  beforeApplicationShutdown(): void {
    this.closing = true;
    if (this.server?.listening) NetServer.prototype.close.call(this.server);
    this.endHeldOpen();
    this.closeIdleConnections();
  }

  private closeAfterAnswers(): void {
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    // Streams end now; each connection then closes once its answer is sent (middleware), like any other.
    this.endHeldOpen();
  }

  private endHeldOpen(): void {
    const held = [...this.heldOpen.values()];
    this.heldOpen.clear();
    for (const end of held) end();
  }

  /** Not server.closeIdleConnections(): Node counts a connection that has sent nothing yet as busy. */
  private closeIdleConnections(): void {
    const busy = new Set<Socket | null>();
    for (const res of this.inFlight) busy.add(res.socket);
    for (const socket of this.sockets) if (!busy.has(socket)) socket.destroy();
  }
}
