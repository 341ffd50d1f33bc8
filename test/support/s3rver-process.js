// s3rver in a process of its own, for test/support/s3-server.ts and bench/attachments.js:
// node --openssl-legacy-provider s3rver-process.js <directory> <bucket> [port]; prints {"port":...} once it listens.
// The legacy provider is for s3rver's ListObjectsV2 continuation tokens, which it enciphers with DES
// (OpenSSL 3, as in Node 18+, has DES only there): without it a listing longer than a page answers 500.
const S3rver = require('s3rver');
const { setInterval } = require('node:timers');

const [directory, bucket, port = '0'] = process.argv.slice(2);
const server = new S3rver({ address: '127.0.0.1', port: Number(port), silent: true, directory, configureBuckets: [{ name: bucket }] });
server.run().then(({ port }) => process.stdout.write(`${JSON.stringify({ port })}\n`));
process.on('SIGTERM', () => server.close().finally(() => process.exit(0)));
// Gone with the test run that started it, however that ended.
const parent = process.ppid;
setInterval(() => {
  try {
    process.kill(parent, 0);
  } catch {
    process.exit(0);
  }
}, 1000).unref();
