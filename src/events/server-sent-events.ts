/**
 * Server-Sent Events framing (decisions.md section 20), by hand: three fixed lines a message, and
 * the libraries impose what the contract rules out (@Sse() rewrites Cache-Control; eventsource-encoder orders fields otherwise).
 */

/** The answer's headers: no cache may keep or transform it, and no proxy (nginx) may buffer it. */
export const EVENT_STREAM_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'private, no-cache',
  'X-Accel-Buffering': 'no',
} as const;

/** How long a client waits before it reconnects after the stream ends, sent first. */
export const RECONNECT_AFTER_MS = 2_000;

/** The first message: how long to wait before reconnecting. */
export function retryMessage(ms: number): string {
  return `retry: ${ms}\n\n`;
}

/** A comment line, which clients ignore: keeps idle connections (and the proxies on the way) open. */
export function commentMessage(text: string): string {
  return `: ${text}\n\n`;
}

/**
 * One event: `id` (the client sends it back as Last-Event-ID when it reconnects), `event`
 * (its type, for EventSource listeners) and `data`, the event's JSON on one line.
 */
export function eventMessage(id: number, type: string, json: string): string {
  return `id: ${id}\nevent: ${type}\ndata: ${oneLine(json)}\n\n`;
}

/** A line break in JSON text can only be white space between tokens (in a string it is escaped): a space does as well. */
function oneLine(json: string): string {
  return json.includes('\n') || json.includes('\r') ? json.replace(/\r\n|\r|\n/g, ' ') : json;
}
