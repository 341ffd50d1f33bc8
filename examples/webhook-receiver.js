'use strict';
// A minimal webhook receiver: verifies each delivery with the Standard Webhooks library and
// prints the event. Run it, then subscribe its URL (see docs/webhooks.md):
//
//   WEBHOOK_SECRET=whsec_... PORT=4000 node examples/webhook-receiver.js
//
// The service refuses http:// and private addresses unless it runs with
// WEBHOOK_ALLOW_PRIVATE_URLS=true (development); in production put this behind https.

const http = require('node:http');
const { Webhook } = require('standardwebhooks');

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the secret answered when the webhook was created (whsec_...)');
  process.exit(1);
}
const verifier = new Webhook(secret);
// Deliveries are at least once: the same event may come again (a retry, a redelivery). Its
// webhook-id is the event id; a real receiver keeps the ids it handled in its own database.
const seen = new Set();
const MAX_BODY_BYTES = 1024 * 1024;

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    // Verify the exact bytes received, before parsing them.
    const body = Buffer.concat(chunks).toString('utf8');
    let event;
    try {
      // Checks the signature, and that webhook-timestamp is within 5 minutes (replays).
      event = verifier.verify(body, req.headers);
    } catch (error) {
      console.warn(`Rejected a request: ${error.message}`);
      res.writeHead(400).end();
      return;
    }
    // Answer 2xx quickly: anything else, or no answer within WEBHOOK_TIMEOUT_MS, is retried.
    res.writeHead(204).end();
    if (seen.has(event.id)) return console.log(`(again) #${event.sequence} ${event.type}`);
    seen.add(event.id);
    // Events may arrive out of order; `sequence` (per project, gap-free) gives the order, and
    // GET /api/v1/events?after=<sequence> fills any hole.
    const subject = event.data.task ?? event.data.sprint ?? {};
    console.log(
      `#${event.sequence} ${event.type} ${subject.id ?? ''} ${subject.title ?? subject.name ?? ''} by ${event.actor} at ${event.occurredAt}`,
    );
  });
});

const port = Number(process.env.PORT || 4000);
server.listen(port, () => console.log(`Receiving webhooks on http://localhost:${port}/`));
