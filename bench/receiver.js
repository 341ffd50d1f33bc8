'use strict';
// A webhook receiver for the bench: node:http on 127.0.0.1, answers 200 at once, and notes
// when each request arrived and its `webhook-id` (the event id, to count duplicates). Runs in
// the harness's process; the service must run with WEBHOOK_ALLOW_PRIVATE_URLS=true to send to it.

const http = require('node:http');

async function startReceiver() {
  const times = [];
  const ids = new Set();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      times.push(Date.now());
      ids.add(req.headers['webhook-id']);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    /** Arrival times (ms since the epoch), in order. */
    times,
    /** Distinct webhook-id values seen. */
    ids,
    /** Forgets what arrived so far (before a measurement). */
    reset() {
      times.length = 0;
      ids.clear();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

module.exports = { startReceiver };
