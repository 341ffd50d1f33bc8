import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { AppConfig } from '../../src/config/app-config';

/**
 * The credentials s3rver knows. It checks that the key id is one of its accounts but does not
 * verify a SigV4 signature, so a wrong secret or a bucket policy cannot be tried against it
 * (docs/attachment-storage.md).
 */
export const S3RVER_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

export interface S3Server {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  bucket: string;
  /** Where s3rver keeps the bucket's objects and the parts of unfinished multipart uploads. */
  directory: string;
  /** The app's configuration for this bucket (startTestApp's overrides). */
  config: Pick<AppConfig, 's3Bucket' | 's3Endpoint' | 's3Region' | 's3ForcePathStyle'>;
  /** The same as environment variables, credentials included: for a server started as a process. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A real S3-protocol server (s3rver, in a child process: s3rver-process.js says why) on
 * 127.0.0.1 on a free port, keeping its files in a new temporary directory, with one empty bucket.
 * The AWS SDK of this process is given s3rver's credentials while it runs (the SDK reads them from
 * the environment, as it does in service).
 */
export async function startS3Server(bucket = 'attachments-test', port = 0): Promise<S3Server> {
  const directory = mkdtempSync(path.join(tmpdir(), 's3rver-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', path.join(__dirname, 's3rver-process.js'), directory, bucket, String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  port = await firstLine(child).then((line) => (JSON.parse(line) as { port: number }).port);
  const saved = Object.fromEntries(Object.keys(S3RVER_CREDENTIALS).map((name) => [name, process.env[name]]));
  Object.assign(process.env, S3RVER_CREDENTIALS);
  // The SDK's notice that its 2027 releases will need Node 22 (docs/attachment-storage.md), once per test file, is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    directory,
    config: { s3Bucket: bucket, s3Endpoint: endpoint, s3Region: 'us-east-1', s3ForcePathStyle: true },
    env: { ...S3RVER_CREDENTIALS, S3_BUCKET: bucket, S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: 'true' },
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      lines.close();
      resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before it listened`)));
  });
}

/**
 * s3rver for the tests of a file or describe block: started in a beforeAll, stopped in an afterAll.
 * Its port is chosen now, so that `config` can be given to suites that take the app's overrides
 * when they are declared (attachmentRules); `server()` is the running server, inside tests.
 */
export function useS3Server(bucket = 'attachments-test'): Pick<S3Server, 'config' | 'bucket'> & { server(): S3Server } {
  const port = freePortNow();
  const endpoint = `http://127.0.0.1:${port}`;
  let server: S3Server | undefined;
  beforeAll(async () => {
    server = await startS3Server(bucket, port);
  });
  afterAll(() => server?.stop());
  return {
    bucket,
    config: { s3Bucket: bucket, s3Endpoint: endpoint, s3Region: 'us-east-1', s3ForcePathStyle: true },
    server: () => {
      if (!server) throw new Error('useS3Server(): s3rver starts in beforeAll; use it inside a test or a hook');
      return server;
    },
  };
}

/** A port free at this moment, found synchronously (a listener opened and closed in a child process). */
function freePortNow(): number {
  const script = "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})";
  return Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}
