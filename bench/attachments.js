'use strict';
// npm run bench:attachments [-- --runs=5 --concurrent=20 --mib=25 --only=directory,s3]
//
// Attachments (issue 39) against a floor measured in the same run:
// 1. The floor (attachments-floor.js, its own process): node:http piping a request body to a
//    file, and a file to a response.
// 2. For each back end, the built service (node dist/main.js, its own process) on a database of
//    its own (PGlite, or tasks_bench_<random> on DATABASE_URL): `directory` (ATTACHMENTS_DIR, a
//    temporary directory) and `s3` (S3_BUCKET on s3rver, started here in a process of its own).
//    - upload: POST /api/v1/tasks/{id}/attachments, multipart/form-data, one file of `--mib`
//      MiB, `--runs` times one after the other (each upload's bytes differ); MiB/s of the median.
//    - download: GET .../content of that file, `--runs` times; MiB/s of the median.
//    - memory: the service's resident memory (VmRSS) sampled every 20 ms while `--concurrent`
//      uploads of `--mib` MiB run at once; the largest rise over the resident memory before them.
//    Targets: upload and download >= 0.5 x the floor; the rise < 100 MiB.
// 3. With `s3`, an S3 floor (not a target, and not what the ratios divide by): the floor process
//    piping each upload's body into one PUT of its length to s3rver, what s3rver allows a service
//    that does nothing else.
// Prints the table and adds it as a dated section at the top of bench/results/attachments.md
// (the sections of earlier runs stay below it).

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { spawn } = require('node:child_process');
const { createInterface } = require('node:readline');
const { setInterval, clearInterval } = require('node:timers');
const { startServer, stopAll, sleep } = require('./processes');
const { createBenchDatabase } = require('./databases');

const ROOT = path.resolve(__dirname, '..');
const ADMIN_TOKEN = randomBytes(16).toString('hex');
const MiB = 1024 * 1024;

function option(name, fallback) {
  const arg = process.argv.find((candidate) => candidate.startsWith(`--${name}=`));
  return arg ? arg.split('=')[1] : fallback;
}
const RUNS = Number(option('runs', 5));
const CONCURRENT = Number(option('concurrent', 20));
const SIZE = Number(option('mib', 25)) * MiB;
const BACK_ENDS = option('only', 'directory,s3').split(',').filter(Boolean);

/** The bytes every upload sends, but for the first 16, which make each upload's bytes (and sha256) its own. */
const BYTES = randomBytes(SIZE);
let uploadsSent = 0;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One request; resolves with {status, ms, body} once the answer has been read whole. `send(req)`
 * writes the body; `discard` reads the answer without keeping it (downloads).
 */
function request(url, { method = 'GET', headers = {}, send, discard = false } = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks = [];
      let length = 0;
      res.on('data', (chunk) => {
        length += chunk.length;
        if (!discard) chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          length,
          body: discard ? null : Buffer.concat(chunks).toString(),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (send) send(req);
    else req.end();
  });
}

/** Writes a file of SIZE bytes, its first 16 unique to this upload, with backpressure. */
async function writeFileBytes(req) {
  const unique = Buffer.alloc(16);
  unique.writeUInt32BE(uploadsSent++, 0);
  unique.write(randomBytes(6).toString('hex'), 4);
  for (const piece of [unique, BYTES.subarray(16)]) {
    for (let at = 0; at < piece.length; at += 256 * 1024) {
      if (!req.write(piece.subarray(at, at + 256 * 1024))) await new Promise((resolve) => req.once('drain', resolve));
    }
  }
}

function uploadToFloor(floor, route = '/upload') {
  return request(`${floor.url}${route}`, {
    method: 'POST',
    headers: { 'Content-Length': SIZE },
    send: (req) => writeFileBytes(req).then(() => req.end()),
  });
}

function uploadToService(service, key, taskId) {
  const boundary = `bench${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench-${uploadsSent}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return request(`${service.url}/api/v1/tasks/${taskId}/attachments`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': `multipart/form-data; boundary=${boundary}`,
      'Content-Length': head.length + SIZE + tail.length,
    },
    send: async (req) => {
      req.write(head);
      await writeFileBytes(req);
      req.end(tail);
    },
  });
}

function expectStatus(answer, status, what) {
  if (answer.status !== status) throw new Error(`${what} answered ${answer.status}: ${answer.body}`);
  return answer;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mibPerSecond = (ms) => SIZE / MiB / (ms / 1000);

async function throughput(label, once) {
  await once(); // warm-up
  const times = [];
  for (let run = 0; run < RUNS; run++) times.push((await once()).ms);
  const ms = median(times);
  console.log(`  ${label}: median ${ms.toFixed(0)} ms, ${mibPerSecond(ms).toFixed(0)} MiB/s`);
  return mibPerSecond(ms);
}

function rssMiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

/** The largest rise of the process's resident memory while `count` uploads run at once. */
async function concurrentRise(pid, count, upload) {
  await sleep(500);
  const before = rssMiB(pid);
  let peak = before;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      // the process is gone: the uploads fail below
    }
  }, 20);
  const started = Date.now();
  try {
    await Promise.all(Array.from({ length: count }, async () => upload()));
  } finally {
    clearInterval(sampler);
  }
  return { before, peak, rise: peak - before, seconds: (Date.now() - started) / 1000 };
}

async function call(url, method, token, body) {
  const res = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** s3rver in a process of its own (test/support/s3rver-process.js), with one bucket. */
async function startS3rver(directory, bucket) {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', path.join(ROOT, 'test/support/s3rver-process.js'), directory, bucket], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
  });
  const { port } = JSON.parse(line);
  return {
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')))),
  };
}

async function measureBackEnd(name, floorRates) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `attachments-bench-${name}-`));
  const database = await createBenchDatabase(process.env.DATABASE_URL);
  const s3 = name === 's3' ? await startS3rver(path.join(scratch, 's3rver'), 'attachments-bench') : null;
  let service;
  try {
    service = await startServer(
      `service (${name})`,
      ['dist/main.js'],
      {
        ...database.env,
        ...(s3 ? s3.env : { ATTACHMENTS_DIR: path.join(scratch, 'attachments') }),
        ADMIN_TOKEN,
        ATTACHMENT_QUOTA_BYTES: String(1024 * 1024 * MiB),
        RATE_LIMIT_PER_MINUTE: '10000000',
        LOG_LEVEL: 'warn',
        HOST: '127.0.0.1',
      },
      { timeoutMs: 180_000 },
    );
    const { project } = await call(`${service.url}/admin/v1/projects`, 'POST', ADMIN_TOKEN, { name: 'Attachment bench' });
    const { secret: key } = await call(`${service.url}/admin/v1/projects/${project.id}/keys`, 'POST', ADMIN_TOKEN, {
      name: 'Bench',
      permissions: ['tasks:create', 'attachments:write'],
    });
    const { task } = await call(`${service.url}/api/v1/tasks`, 'POST', key, { title: 'Attachment bench' });
    console.log(`${name} (${database.engine}):`);
    let attachment;
    const upload = async () => {
      const answer = expectStatus(await uploadToService(service, key, task.id), 201, 'An upload');
      attachment = JSON.parse(answer.body).attachment;
      return answer;
    };
    const uploadRate = await throughput('upload', upload);
    const contentUrl = `${service.url}/api/v1/tasks/${task.id}/attachments/${attachment.id}/content`;
    const downloadRate = await throughput('download', async () => {
      const answer = expectStatus(await request(contentUrl, { headers: { Authorization: `Bearer ${key}` }, discard: true }), 200, 'A download');
      if (answer.length !== SIZE) throw new Error(`A download gave ${answer.length} bytes of ${SIZE}`);
      return answer;
    });
    const memory = await concurrentRise(service.pid, CONCURRENT, upload);
    console.log(`  ${CONCURRENT} uploads at once: ${memory.seconds.toFixed(1)} s, RSS ${memory.before.toFixed(0)} -> ${memory.peak.toFixed(0)} MiB`);
    return {
      name,
      engine: database.engine,
      upload: uploadRate,
      download: downloadRate,
      uploadRatio: uploadRate / floorRates.upload,
      downloadRatio: downloadRate / floorRates.download,
      memory,
    };
  } finally {
    if (service) await service.stop();
    if (s3) await s3.stop();
    await database.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

async function measureFloor() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'attachments-bench-floor-'));
  const downloadFile = path.join(scratch, 'download.bin');
  fs.writeFileSync(downloadFile, BYTES);
  // With the s3 back end, the S3 floor too: the floor process pipes each body into one PUT to s3rver.
  const bucket = 'attachments-floor';
  const s3 = BACK_ENDS.includes('s3') ? await startS3rver(path.join(scratch, 's3rver'), bucket) : null;
  const args = [path.join(__dirname, 'attachments-floor.js'), scratch, downloadFile, ...(s3 ? [`${s3.env.S3_ENDPOINT}/${bucket}`] : [])];
  const floor = await startServer('floor', args, {}, { readyPath: '/ready' });
  try {
    console.log('floor (node:http, body to file, file to response):');
    const upload = await throughput('upload', async () => expectStatus(await uploadToFloor(floor), 201, 'A floor upload'));
    const download = await throughput('download', async () =>
      expectStatus(await request(`${floor.url}/file`, { discard: true }), 200, 'A floor download'),
    );
    const memory = await concurrentRise(floor.pid, CONCURRENT, async () => expectStatus(await uploadToFloor(floor), 201, 'A floor upload'));
    console.log(`  ${CONCURRENT} uploads at once: ${memory.seconds.toFixed(1)} s, RSS ${memory.before.toFixed(0)} -> ${memory.peak.toFixed(0)} MiB`);
    let s3Upload = null;
    if (s3) {
      console.log('S3 floor (node:http, body piped into one PUT of its length to s3rver):');
      s3Upload = await throughput('upload', async () => expectStatus(await uploadToFloor(floor, '/upload-s3'), 201, 'An S3 floor upload'));
    }
    return { upload, download, memory, s3Upload };
  } finally {
    await floor.stop();
    if (s3) await s3.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function report(floor, results) {
  const mib = (value) => `${value.toFixed(0)} MiB/s`;
  const verdict = (ok) => (ok ? 'meets' : '**misses**');
  const lines = [
    `## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `${os.cpus().length} cores, Node ${process.version}; ` +
      `${SIZE / MiB} MiB files, median of ${RUNS} runs after a warm-up; ${CONCURRENT} uploads at once for the memory rise. ` +
      'S3 is s3rver on the same machine (its own process): its disk writes compete with the service for the same cores.',
    '',
    '| | upload | x floor (>= 0.5) | download | x floor (>= 0.5) | RSS rise, uploads at once (< 100 MiB) |',
    '|---|---|---|---|---|---|',
    `| floor: node:http, body to file, file to response | ${mib(floor.upload)} | 1 | ${mib(floor.download)} | 1 | ${floor.memory.rise.toFixed(0)} MiB |`,
    ...(floor.s3Upload === null
      ? []
      : [
          `| S3 floor (not a target): node:http, body piped into one PUT to s3rver | ${mib(floor.s3Upload)} | ${(floor.s3Upload / floor.upload).toFixed(2)} | | | |`,
        ]),
    ...results.map(
      (r) =>
        `| ${r.name} (${r.engine}) | ${mib(r.upload)} | ${r.uploadRatio.toFixed(2)}: ${verdict(r.uploadRatio >= 0.5)} | ${mib(r.download)} | ` +
        `${r.downloadRatio.toFixed(2)}: ${verdict(r.downloadRatio >= 0.5)} | ${r.memory.rise.toFixed(0)} MiB ` +
        `(${r.memory.before.toFixed(0)} to ${r.memory.peak.toFixed(0)}): ${verdict(r.memory.rise < 100)} |`,
    ),
    '',
  ];
  const text = lines.join('\n');
  console.log(`\n${text}`);
  const file = path.join(__dirname, 'results', 'attachments.md');
  const title = '# Attachments bench (npm run bench:attachments)\n';
  const earlier = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').replace(title, '').trimStart() : '';
  fs.writeFileSync(file, `${title}\n${text}\n${earlier}`);
  console.log(`Written to ${path.relative(ROOT, file)}`);
}

async function main() {
  const floor = await measureFloor();
  const results = [];
  for (const name of BACK_ENDS) results.push(await measureBackEnd(name, floor));
  report(floor, results);
}

process.on('SIGINT', () => stopAll().finally(() => process.exit(130)));
main().catch(async (error) => {
  console.error(error);
  await stopAll();
  process.exit(1);
});
