import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type IncomingHttpHeaders, request } from 'node:http';

/** GET /api/v1/events/stream as a plain HTTP client sees it, parsed as it arrives (eventsource-parser). */
export interface StreamClient {
  status: number;
  headers: IncomingHttpHeaders;
  /** Everything received, as sent. */
  raw(): string;
  /** The messages with data received so far, in order. */
  events: EventSourceMessage[];
  comments: string[];
  retry: number | null;
  /** How the answer ended: `end` when the server finished it, `aborted` when the connection broke first. */
  finished: Promise<'end' | 'aborted'>;
  /** Waits until `count` messages have come (at most `timeoutMs`), answering them all. */
  waitForEvents(count: number, timeoutMs?: number): Promise<EventSourceMessage[]>;
  /** The client leaves: closes its connection. */
  close(): void;
}

export interface StreamOptions {
  query?: string;
  lastEventId?: string;
  method?: 'GET' | 'HEAD';
}

/** Opens a stream with `key`; resolves once the answer's headers (and, for an error, its body) have come. */
export function openEventStream(baseUrl: string, key: string, options: StreamOptions = {}): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' };
    if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
    const req = request(`${baseUrl}/api/v1/events/stream${options.query ? `?${options.query}` : ''}`, { method: options.method ?? 'GET', headers });
    req.on('error', reject);
    req.on('response', (res) => {
      let raw = '';
      const waiters = new Set<() => void>();
      const client: StreamClient = {
        status: res.statusCode!,
        headers: res.headers,
        raw: () => raw,
        events: [],
        comments: [],
        retry: null,
        finished: new Promise((done) => {
          res.once('end', () => done('end'));
          res.once('aborted', () => done('aborted'));
          res.once('error', () => done('aborted'));
        }),
        waitForEvents: (count, timeoutMs = 5_000) =>
          new Promise((done, fail) => {
            const check = () => {
              if (client.events.length < count) return;
              clearTimeout(timer);
              waiters.delete(check);
              done(client.events);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`${client.events.length} of ${count} events after ${timeoutMs} ms; received:\n${raw.slice(-2000)}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
        close: () => req.destroy(),
      };
      const parser = createParser({
        onEvent: (event) => {
          client.events.push(event);
          for (const check of [...waiters]) check();
        },
        onComment: (comment) => client.comments.push(comment.trim()),
        onRetry: (ms) => (client.retry = ms),
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        parser.feed(chunk);
      });
      res.on('error', () => undefined);
      if (res.statusCode === 200) resolve(client);
      else res.once('end', () => resolve(client));
    });
    req.end();
  });
}
