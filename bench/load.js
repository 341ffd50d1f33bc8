'use strict';
// The two ways a row is measured.
//
// throughput(): closed loop with autocannon: `connections` keep-alive connections, each
// sending its next request as soon as the previous answer arrives, for `duration` seconds.
// Gives the most the server can answer per second, and the latency under that saturation.
//
// fixedRate(): open loop at a fixed arrival rate, requests evenly spaced (every 5 ms at
// 200/s), latency measured from the moment each request was *due*, so a server that falls
// behind is charged for the wait (no coordinated omission). We do not use autocannon's
// overallRate for this: it lets each connection send its whole quota for the second
// back-to-back as soon as each one-second tick starts (node_modules/autocannon/lib/httpClient.js,
// rateInterval), which measures a burst of `connections` concurrent requests every
// second rather than a steady 200/s; and it corrects latencies with an expected interval
// of ceil(1/rate) = 1 ms, which is meaningless here.
//
// A scenario is { name, headers, ok?, steps: [(ctx) => ({method, path, body, headers?})], done?(ctx, ok) }:
// one iteration runs its steps in order on one connection (delete then restore). A step's own
// headers (Idempotency-Key, If-None-Match) are added to the scenario's. `ok` lists the statuses
// that count as success (e.g. [304] for a conditional GET); without it, any 2xx.

const autocannon = require('autocannon');
const http = require('node:http');
const { performance } = require('node:perf_hooks');

/** Whether `status` (a number, or an error code when no answer came) is a success for `scenario`. */
function succeeded(scenario, status) {
  return scenario.ok ? scenario.ok.includes(status) : status >= 200 && status < 300;
}

function buildRequest(scenario, step) {
  const { method, path, body } = step;
  const headers = { ...scenario.headers, ...step.headers };
  let payload;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  return { method, path, headers, body: payload };
}

/** Closed-loop saturation with autocannon. */
async function throughput(baseUrl, scenario, { connections, duration }) {
  const failures = new Map();
  let ok = 0;
  let failed = 0;
  const requests = scenario.steps.map((step, index) => ({
    setupRequest: (req, context) => ({ ...req, ...buildRequest(scenario, step(context)) }),
    onResponse: (status, body, context) => {
      const success = succeeded(scenario, status);
      if (success) ok++;
      else {
        failed++;
        failures.set(status, (failures.get(status) ?? 0) + 1);
      }
      if (!success || index === scenario.steps.length - 1) scenario.done?.(context, success, index);
    },
  }));
  const result = await autocannon({ url: baseUrl, connections, duration, requests, timeout: 30 });
  return {
    mode: 'throughput',
    connections,
    duration: result.duration,
    requests: result.requests.total,
    ok,
    rps: ok / result.duration,
    iterationsPerSecond: ok / scenario.steps.length / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    // autocannon's `errors` counts connection errors, timeouts included.
    errors: failed + result.errors,
    failures: Object.fromEntries([
      ...failures,
      ...(result.errors ? [[`connection errors (${result.timeouts} of them timeouts)`, result.errors]] : []),
    ]),
  };
}

// Idle sockets close after 2 s, before the server's keep-alive timeout (5 s in Node) can
// close them under a request that is being sent.
const newAgent = () => new http.Agent({ keepAlive: true, maxSockets: 256, timeout: 2000 });
const checkAgent = newAgent();

/** Resolves with the status code, or with the error code when no answer came. */
function send(baseUrl, request, agent) {
  return new Promise((resolve) => {
    const req = http.request(`${baseUrl}${request.path}`, { method: request.method, headers: request.headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', (error) => resolve(error.code ?? 'error'));
    req.setTimeout(30_000, () => req.destroy());
    req.end(request.body);
  });
}

/** How long an open-loop row waits for its last answers before counting them unanswered. */
const DRAIN_MS = 5000;
/** At most this many iterations waiting for an answer; beyond it the schedule skips (an error). */
const MAX_IN_FLIGHT = 64;

/**
 * Open loop at `rate` iterations per second for `duration` seconds. A server slower than
 * the rate falls further behind every second. So that one overloaded row cannot spill
 * into the next: at most MAX_IN_FLIGHT iterations wait at a time (a due iteration beyond
 * that is not sent and counts as an error), whatever is unanswered DRAIN_MS after the
 * last one was due counts as an error with its wait so far as its latency (a lower bound),
 * and the row returns only once the server has answered everything it was sent.
 */
async function fixedRate(baseUrl, scenario, { rate, duration }) {
  const latencies = [];
  // Per step, from when that request was sent (the list of patch + list: right after the patch answered).
  const stepLatencies = scenario.steps.map(() => []);
  const failures = new Map();
  const fail = (why) => failures.set(why, (failures.get(why) ?? 0) + 1);
  const interval = 1000 / rate;
  const total = Math.round(rate * duration);
  const agent = newAgent();
  const start = performance.now();
  const pending = new Set();
  let closed = false;

  async function iteration(due) {
    const context = {};
    for (let index = 0; index < scenario.steps.length; index++) {
      const sent = performance.now();
      const status = await send(baseUrl, buildRequest(scenario, scenario.steps[index](context)), agent);
      if (closed) return;
      stepLatencies[index].push(performance.now() - sent);
      if (!succeeded(scenario, status)) {
        fail(status);
        scenario.done?.(context, false, index);
        return;
      }
    }
    scenario.done?.(context, true, scenario.steps.length - 1);
    latencies.push(performance.now() - due);
  }

  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    if (pending.size >= MAX_IN_FLIGHT) {
      fail(`not sent: ${MAX_IN_FLIGHT} already waiting`);
      continue;
    }
    const entry = { due, finished: null };
    entry.finished = iteration(due).finally(() => pending.delete(entry));
    pending.add(entry);
  }
  const drainUntil = performance.now() + DRAIN_MS;
  while (pending.size && performance.now() < drainUntil) await new Promise((resolve) => setTimeout(resolve, 20));
  closed = true;
  const now = performance.now();
  for (const { due } of pending) {
    latencies.push(now - due);
    fail(`unanswered ${DRAIN_MS / 1000} s after the run`);
  }
  const answered = latencies.length - pending.size;
  // Let the server finish what it was sent before the next row starts.
  let timer;
  await Promise.race([Promise.all([...pending].map((entry) => entry.finished)), new Promise((resolve) => (timer = setTimeout(resolve, 60_000)))]);
  clearTimeout(timer);
  agent.destroy();
  const elapsed = (now - start) / 1000;
  const pct = (values, p) => (values.length ? values[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)] : NaN);
  const stats = (values) => {
    values.sort((a, b) => a - b);
    return { p50: pct(values, 50), p99: pct(values, 99), max: values[values.length - 1] };
  };
  const iterations = stats(latencies);
  return {
    mode: 'fixed',
    rate,
    duration: elapsed,
    requests: total * scenario.steps.length,
    achieved: answered / elapsed,
    // Per iteration (a pair for two-step rows), from when it was due.
    ...iterations,
    // Per step, from when its request was sent.
    steps: stepLatencies.map(stats),
    errors: total - answered,
    failures: Object.fromEntries(failures),
  };
}

/** One request, its status and parsed body (for checks, not for measuring). */
function fetchJson(baseUrl, scenario, step) {
  const request = buildRequest(scenario, step);
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${request.path}`, { method: request.method, headers: request.headers, agent: checkAgent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body = null;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          body = text;
        }
        resolve({ status: res.statusCode, headers: res.headers, text, body });
      });
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

module.exports = { throughput, fixedRate, fetchJson, succeeded };
