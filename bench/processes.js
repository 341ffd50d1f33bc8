'use strict';
// Starting and stopping the servers under test (the floor, then the service), each in a
// process of its own, on a free loopback port.

const { spawn } = require('node:child_process');
const http = require('node:http');
const net = require('node:net');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function get(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

/** Servers started and not yet stopped, for stopAll() on Ctrl-C. */
const live = new Set();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns `node <args>` and waits until GET readyPath answers 200. Keeps the last lines of
 * its output, to show them if it fails.
 */
async function startServer(name, args, env, { readyPath = '/ready', timeoutMs = 60_000, stopSignal = 'SIGTERM' } = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: require('node:path').resolve(__dirname, '..'),
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  const keep = (chunk) => {
    output.push(chunk.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve((exited = { code, signal }))));

  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (exited) break;
    if ((await get(`http://127.0.0.1:${port}${readyPath}`)) === 200) {
      const server = {
        name,
        url: `http://127.0.0.1:${port}`,
        pid: child.pid,
        output: () => output.join(''),
        async stop() {
          if (!exited) child.kill(stopSignal);
          const timer = setTimeout(() => !exited && child.kill('SIGKILL'), 20_000);
          await exit;
          clearTimeout(timer);
          live.delete(server);
        },
      };
      live.add(server);
      return server;
    }
    await sleep(100);
  }
  if (!exited) child.kill('SIGKILL');
  await exit;
  throw new Error(`${name} did not become ready (${exited ? `exited ${JSON.stringify(exited)}` : 'timeout'}):\n${output.join('')}`);
}

async function stopAll() {
  await Promise.all([...live].map((server) => server.stop()));
}

module.exports = { startServer, stopAll, freePort, sleep };
