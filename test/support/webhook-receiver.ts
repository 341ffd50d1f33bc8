import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Date.now() when the request had arrived whole. */
  at: number;
}

/** How the receiver answers its n-th request (from 1): a status, or `hang` to never answer (until closed). */
export type Answer = (n: number, request: ReceivedRequest) => number | 'hang' | { status: number; headers: Record<string, string> };

export interface WebhookReceiver {
  /** http://127.0.0.1:<port>/hooks */
  url: string;
  received: ReceivedRequest[];
  answer: Answer;
  /** Resolves once `count` requests have arrived; fails after `ms`. */
  waitFor(count: number, ms?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records what it gets and answers as told (200 by default). */
export async function startReceiver(answer: Answer = () => 200): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const hanging: ServerResponse[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    received,
    answer,
    waitFor: (count, ms = 10_000) =>
      waitUntil(
        () => received.length >= count,
        ms,
        () => `${count} webhook requests (got ${received.length})`,
      ).then(() => received),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)])),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      const decided = receiver.answer(received.length, request);
      if (decided === 'hang') {
        hanging.push(res);
        return;
      }
      const { status, headers } = typeof decided === 'number' ? { status: decided, headers: {} } : decided;
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** Polls `condition` every 10 ms until it holds; fails after `ms`, naming what it waited for. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
  what: string | (() => string) = 'the condition',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Waited ${ms} ms for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
