import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Another process holds the embedded database: `holder` says which. */
export class EmbeddedDatabaseHeld extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: EmbeddedDatabaseHolder,
  ) {
    super(
      `The embedded database in ${dataDir} is in use by another process (pid ${holder.pid}, since ${holder.since}): it belongs to one process at a time`,
    );
  }
}

/** What the holder of an embedded database answers on its socket. */
export interface EmbeddedDatabaseHolder {
  pid: number;
  /** When it took the database (ISO 8601). */
  since: string;
}

// Unix socket paths are limited to about 104 bytes (macOS; 108 on Linux).
const MAX_SOCKET_PATH = 100;

/**
 * Where the holder of `dataDir` listens: a Unix socket in the data directory itself (seen by
 * every process that sees the directory), or, when that path is too long for a socket, one in the
 * temporary directory named by a digest of the directory's real path; a named pipe on Windows.
 */
function socketPathOf(dataDir: string): string {
  const directory = path.resolve(dataDir);
  const digest = () => createHash('sha256').update(realpathSync(directory)).digest('hex').slice(0, 24);
  if (process.platform === 'win32') return `\\\\.\\pipe\\task-planning-service-${digest()}`;
  const inside = path.join(directory, '.server.sock');
  return Buffer.byteLength(inside) <= MAX_SOCKET_PATH ? inside : path.join(tmpdir(), `task-planning-service-${digest()}.sock`);
}

/**
 * The process that holds the embedded database in `dataDir`, or null when none does. A socket
 * file whose process is gone (killed with SIGKILL, say) refuses connections: it holds nothing.
 */
export function embeddedDatabaseHolder(dataDir: string): Promise<EmbeddedDatabaseHolder | null> {
  let socketPath: string;
  try {
    socketPath = socketPathOf(dataDir);
  } catch {
    return Promise.resolve(null); // no such directory: nobody holds it
  }
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let answer = '';
    socket.setTimeout(2000, () => socket.destroy(new Error(`The holder of ${dataDir} did not answer on ${socketPath}`)));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => {
      try {
        resolve(JSON.parse(answer) as EmbeddedDatabaseHolder);
      } catch {
        resolve({ pid: 0, since: 'unknown' });
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(null);
      else reject(error);
    });
  });
}

/**
 * Takes `dataDir` for this process, or throws EmbeddedDatabaseHeld: PGlite takes no lock itself.
 * A listening socket, since the system closes it however the process ends (SIGKILL too).
 */
export async function holdEmbeddedDatabase(dataDir: string): Promise<{ release(): Promise<void> }> {
  mkdirSync(dataDir, { recursive: true });
  const socketPath = socketPathOf(dataDir);
  const held = async () => {
    const holder = await embeddedDatabaseHolder(dataDir);
    if (holder) throw new EmbeddedDatabaseHeld(dataDir, holder);
  };
  await held();
  // A socket file left by a process that is gone.
  if (process.platform !== 'win32') {
    try {
      unlinkSync(socketPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  const since = new Date().toISOString();
  const server: Server = createServer((socket) => socket.end(JSON.stringify({ pid: process.pid, since } satisfies EmbeddedDatabaseHolder)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      // Another process took it between the check and here.
      if (error.code === 'EADDRINUSE') held().then(() => reject(error), reject);
      else reject(error);
    });
    server.listen(socketPath, () => resolve());
  });
  // The socket must not keep the process alive on its own.
  server.unref();
  return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
