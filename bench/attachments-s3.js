'use strict';
// node bench/attachments-s3.js [--runs=5 --mib=25]  (after npm run build)
//
// Where the S3 back end's upload time goes (issue 39), every row in this one run, one after the
// other, on s3rver in a process of its own (as bench/attachments.js starts it):
// - file floor: attachments-floor.js's POST /upload (node:http, body to file), the floor of
//   bench/attachments.js;
// - S3 floor: what s3rver itself allows: a plain node:http PUT of the bytes (from memory) to
//   s3rver, and the SDK's PutObject of a file stream;
// - the store (dist/attachments/storage/s3-store.js, in this process): writeTemporary of the
//   bytes (from memory) and promote, with the time of each S3 command that runs alone (the
//   parts' UploadParts overlap the spooling, so their sum is shown but not subtracted).
// MiB/s of the median of `--runs` after a warm-up.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { createHash, randomBytes } = require('node:crypto');
const { Readable } = require('node:stream');
const { spawn } = require('node:child_process');
const { createInterface } = require('node:readline');
const { startServer, stopAll } = require('./processes');
const { processCpuMs } = require('./cpu');

const ROOT = path.resolve(__dirname, '..');
const MiB = 1024 * 1024;
const option = (name, fallback) => {
  const arg = process.argv.find((candidate) => candidate.startsWith(`--${name}=`));
  return arg ? arg.split('=')[1] : fallback;
};
const RUNS = Number(option('runs', 5));
const SIZE = Number(option('mib', 25)) * MiB;
const BYTES = randomBytes(SIZE);
let sent = 0;
/** The bytes of one upload: BYTES with its first 8 its own, as in bench/attachments.js. */
function uniqueBytes() {
  const bytes = Buffer.from(BYTES);
  bytes.writeDoubleBE(sent++ + Math.random(), 0);
  return bytes;
}
/** The bytes as a stream of 64 KiB chunks, as a request body arrives. */
function chunked(bytes) {
  return Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += 64 * 1024) yield bytes.subarray(at, at + 64 * 1024);
    })(),
    { objectMode: false },
  );
}

const agent = new http.Agent({ keepAlive: true });
function send(url, method, bytes, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { 'Content-Length': bytes.length, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode < 300 ? resolve() : reject(new Error(`${method} ${url}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    (async () => {
      for (let at = 0; at < bytes.length; at += 256 * 1024) {
        if (!req.write(bytes.subarray(at, at + 256 * 1024))) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })();
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rate = (ms) => `${(SIZE / MiB / (ms / 1000)).toFixed(0)} MiB/s`;

/** CPU time (user + system, ms) of a process so far: this one, or another by pid. */
function cpuMs(pid) {
  if (pid !== process.pid) return processCpuMs(pid);
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Median wall time of `once` over RUNS after a warm-up, and the mean CPU time each upload cost
 * the processes of `pids` (by name).
 */
async function timed(once, pids) {
  await once(); // warm-up
  const times = [];
  const cpuBefore = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMs(pid)]));
  for (let run = 0; run < RUNS; run++) {
    const started = process.hrtime.bigint();
    await once();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const cpu = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, (cpuMs(pid) - cpuBefore[name]) / RUNS]));
  return { ms: median(times), cpu };
}

async function startS3rver(directory, bucket) {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', path.join(ROOT, 'test/support/s3rver-process.js'), directory, bucket], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return {
    pid: child.pid,
    endpoint: `http://127.0.0.1:${JSON.parse(line).port}`,
    stop: () => new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGTERM')))),
  };
}

async function main() {
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  const { S3AttachmentStore } = require(path.join(ROOT, 'dist/attachments/storage/s3-store.js'));
  const { S3Client, PutObjectCommand } = require('@aws-sdk/client-s3');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'attachments-s3-bench-'));
  const bucket = 'attachments-bench';
  const rows = [];
  const row = (label, { ms, cpu }, note = '') => {
    const cpus = Object.entries(cpu ?? {})
      .map(([name, value]) => `${name} ${value.toFixed(0)}`)
      .join(', ');
    rows.push(`| ${label} | ${ms.toFixed(0)} ms | ${rate(ms)} | ${cpus} | ${note} |`);
    console.log(`${label}: ${ms.toFixed(0)} ms, ${rate(ms)}; CPU ms per upload: ${cpus} ${note}`);
  };
  const s3 = await startS3rver(path.join(scratch, 's3rver'), bucket);
  const floorFile = path.join(scratch, 'download.bin');
  fs.writeFileSync(floorFile, BYTES);
  const floor = await startServer(
    'floor',
    [path.join(__dirname, 'attachments-floor.js'), scratch, floorFile, `${s3.endpoint}/${bucket}`],
    {},
    {
      readyPath: '/ready',
    },
  );
  const me = process.pid;
  try {
    row(
      'file floor: node:http POST, body to file',
      await timed(() => send(`${floor.url}/upload`, 'POST', uniqueBytes()), { bench: me, floor: floor.pid }),
    );
    row(
      'S3 floor: node:http POST, body piped into one PUT to s3rver',
      await timed(() => send(`${floor.url}/upload-s3`, 'POST', uniqueBytes()), { bench: me, floor: floor.pid, s3rver: s3.pid }),
    );
    let n = 0;
    row(
      's3rver alone: node:http PUT from memory',
      await timed(() => send(`${s3.endpoint}/${bucket}/direct-${n++}`, 'PUT', uniqueBytes()), { bench: me, s3rver: s3.pid }),
    );
    const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
    const files = Array.from({ length: RUNS + 1 }, (_, i) => {
      const file = path.join(scratch, `put-${i}.bin`);
      fs.writeFileSync(file, uniqueBytes());
      return file;
    });
    row(
      's3rver alone: SDK PutObject of a file stream',
      await timed(
        () =>
          client.send(
            new PutObjectCommand({ Bucket: bucket, Key: `sdk-${n}`, Body: fs.createReadStream(files[n++ % files.length]), ContentLength: SIZE }),
          ),
        { bench: me, s3rver: s3.pid },
      ),
    );

    // The store, with the time of each S3 command.
    const store = new S3AttachmentStore({ bucket, endpoint: s3.endpoint, forcePathStyle: true });
    const commands = new Map();
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        const started = process.hrtime.bigint();
        try {
          return await next(args);
        } finally {
          const list = commands.get(context.commandName) ?? [];
          list.push(Number(process.hrtime.bigint() - started) / 1e6);
          commands.set(context.commandName, list);
        }
      },
      { step: 'initialize', name: 'benchTimer' },
    );
    const project = '00000000-0000-4000-8000-000000000000';
    const phases = { write: [], promote: [] };
    const result = await timed(
      async () => {
        const bytes = uniqueBytes();
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        const started = process.hrtime.bigint();
        const temporaryKey = await store.writeTemporary(chunked(bytes));
        const written = process.hrtime.bigint();
        await store.promote(temporaryKey, `${project}/${sha256}`);
        phases.write.push(Number(written - started) / 1e6);
        phases.promote.push(Number(process.hrtime.bigint() - written) / 1e6);
      },
      { bench: me, s3rver: s3.pid },
    );
    // Without the warm-up's.
    for (const list of [...Object.values(phases), ...commands.values()]) list.splice(0, list.length - RUNS * (list.length / (RUNS + 1)));
    row('store: writeTemporary + promote (bench = the store, from memory)', result, '(the sha256 for the key is outside the time)');
    row('&nbsp;&nbsp;writeTemporary', { ms: median(phases.write) });
    row('&nbsp;&nbsp;promote', { ms: median(phases.promote) });
    for (const [name, list] of commands) {
      const perUpload = list.length / RUNS;
      const total = list.reduce((sum, ms) => sum + ms, 0) / RUNS;
      rows.push(`| &nbsp;&nbsp;&nbsp;&nbsp;${name} x ${perUpload} | ${total.toFixed(0)} ms (sum of their times) | | | |`);
      console.log(`  ${name} x ${perUpload}: ${total.toFixed(0)} ms per upload (sum)`);
    }
  } finally {
    await floor.stop();
    await s3.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  console.log(`\n| ${SIZE / MiB} MiB, median of ${RUNS} | time | rate | CPU ms per upload (mean) | |\n|---|---|---|---|---|\n${rows.join('\n')}`);
}

main().catch(async (error) => {
  console.error(error);
  await stopAll();
  process.exit(1);
});
