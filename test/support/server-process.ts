import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { ADMIN_TOKEN } from './test-database';

const ROOT = path.resolve(__dirname, '../..');

/** The built service (dist/main.js, built by build-global-setup.js) running as a process of its own, as `npm start` runs it. */
export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything written on stdout so far: JSON log lines and the demo banner. */
  stdout(): string;
  /** The JSON lines of stdout, parsed. */
  logLines(): Record<string, unknown>[];
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

// Generous: a new embedded database (migrations, demo project) on a machine busy with other tests.
const START_TIMEOUT_MS = 90_000;

/**
 * Starts `node dist/main.js` with `env` added to a clean environment (PORT=0: any free
 * port, read back from its "Listening" line; the admin interface on ADMIN_TOKEN). A server
 * that does not start is killed.
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const base: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: { ...base, PORT: '0', ADMIN_TOKEN, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`The server did not start within ${START_TIMEOUT_MS} ms:\n${stdout}\n${stderr}`));
    }, START_TIMEOUT_MS);
    const check = () => {
      const match = /"msg":"Listening on http:\/\/(?:\[[^\]]+\]|[^:/]+):(\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`The server exited with ${code} before listening:\n${stdout}\n${stderr}`));
    });
  });
  return {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    stdout: () => stdout,
    logLines: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    exited,
  };
}

/** A project with a key holding every permission, made through the server's admin interface. */
export async function createProjectKey(baseUrl: string): Promise<string> {
  const admin = (url: string, body: object) =>
    fetch(`${baseUrl}${url}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => {
      if (res.status !== 201) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
      return res.json() as Promise<Record<string, { id: string }> & { secret: string }>;
    });
  const { project } = await admin('/admin/v1/projects', { name: 'Process test' });
  const { secret } = await admin(`/admin/v1/projects/${project.id}/keys`, {
    name: 'Load',
    permissions: ['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage'],
  });
  return secret;
}

/** Stops the server if it still runs (SIGTERM, then SIGKILL after 15 s) and waits for its exit. */
export async function stopServerProcess(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  await server.exited;
  clearTimeout(timer);
}
