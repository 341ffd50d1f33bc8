import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { format } from 'sql-formatter';
import type { SentStatement } from '../../src/database/prisma.service';
import type { TestApp } from './test-app';

/** Where the snapshots live, and the command that rewrites them. */
export const SNAPSHOT_DIR = path.join(__dirname, '..', '..', 'sql');
export const SNAPSHOT_COMMAND = 'npm run sql:snapshot';
/** Set by SNAPSHOT_COMMAND: the run writes the files instead of comparing them. */
export const WRITING = process.env.SQL_SNAPSHOTS === 'write';

interface Captured {
  text: string;
  sent: SentStatement;
}

/** One request's statements, as a snapshot file says them. */
export interface Snapshot {
  /** The file, relative to SNAPSHOT_DIR, without `.sql`: `tasks/create`. */
  name: string;
  /** The request, `POST /api/v1/tasks`, and what it is about. */
  request: string;
  about: string;
  statements: Captured[];
  /** Its statements start with those of `sql/<name>.sql`, which are left out here. */
  after?: { name: string; about: string };
}

/**
 * Records the driver statements (PrismaService.sql, preparedSql, write: the hot paths' way to the
 * database) that each HTTP request to `t` sends, by request: the request's handling runs in an
 * AsyncLocalStorage context of its own, which the statement observer reads, so that what the
 * service's timers send meanwhile (webhook worker, retention, maintenance) is not counted.
 */
export class StatementRecorder {
  private readonly request = new AsyncLocalStorage<Captured[]>();
  private current: Captured[] | null = null;

  constructor(t: TestApp) {
    const server = t.app.getHttpServer() as Server;
    // Every listener (the app's, and the answer checker's before it), in order, inside the context.
    const listeners = server.listeners('request') as ((...args: unknown[]) => void)[];
    server.removeAllListeners('request');
    server.on('request', (...args: unknown[]) => {
      const handle = () => listeners.forEach((listener) => listener.apply(server, args));
      const captured = this.current;
      if (captured === null) handle();
      else this.request.run(captured, handle);
    });
    t.prisma.onStatement((text, sent) => {
      if (sent.via !== 'prisma') this.request.getStore()?.push({ text, sent });
    });
  }

  /** The statements the requests `send` makes send (one request at a time). */
  async record(send: () => PromiseLike<unknown>): Promise<Captured[]> {
    const captured: Captured[] = [];
    this.current = captured;
    try {
      await send();
    } finally {
      this.current = null;
    }
    return captured;
  }
}

/** A snapshot file's text: a header, then each statement formatted, a write's round trips marked. */
export function snapshotText(snapshot: Snapshot): string {
  const lines = [
    `-- ${requestLine(snapshot.request)}`,
    ...snapshot.about.split('\n').map((line) => `-- ${line}`),
    ...(snapshot.after ? [`-- After ${snapshot.after.about} (sql/${snapshot.after.name}.sql).`] : []),
    `-- Written by \`${SNAPSHOT_COMMAND}\` (test/statement-snapshots.e2e-spec.ts), do not edit: the statements the`,
    '-- request sends on the database driver, in order, formatted, with their parameters as $1, $2...',
  ];
  let previous: SentStatement['write'] | undefined;
  let statement = 0;
  for (const { text, sent } of snapshot.statements) {
    const write = sent.write;
    const sameRoundTrip = write && previous && write.id === previous.id && write.roundTrip === previous.roundTrip;
    if (!sameRoundTrip) {
      lines.push('');
      if (write) {
        const first = !previous || previous.id !== write.id;
        const commit = write.commit ? ', then COMMIT' : '';
        lines.push(`-- ${first ? 'Write transaction (PrismaService.write), round trip' : 'Round trip'} ${write.roundTrip}${commit}:`);
      } else {
        lines.push(`-- ${sent.via === 'preparedSql' ? 'A prepared statement (PrismaService.preparedSql)' : 'A statement (PrismaService.sql)'}:`);
      }
    }
    previous = write;
    lines.push(`-- ${++statement}.`, `${formatStatement(text)};`);
  }
  return `${lines.join('\n')}\n`;
}

/** The method and path, ids and cursors named rather than shown (they differ at each run). */
export function requestLine(request: string): string {
  return request.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{id}').replace(/cursor=[^&]+/, 'cursor={cursor}');
}

/**
 * A statement laid out for reading and for diffs, by sql-formatter (as Immich lays out its
 * generated queries): one item a line, whatever the layout of the templates it was assembled
 * from. A statement it cannot parse is kept as sent, its indentation made relative.
 */
export function formatStatement(text: string): string {
  try {
    return format(text, { language: 'postgresql', keywordCase: 'preserve', tabWidth: 2, expressionWidth: 100 });
  } catch {
    const lines = text
      .split('\n')
      .map((line) => line.replace(/\s+$/, ''))
      .filter((line) => line.trim() !== '');
    const indent = Math.min(...lines.slice(1).map((line) => line.length - line.trimStart().length));
    const relative = lines.map((line, index) => (index === 0 ? line.trimStart() : line.slice(Number.isFinite(indent) ? indent : 0)));
    return ['-- (as sent: sql-formatter could not read it)', ...relative].join('\n');
  }
}

/** Every snapshot file under SNAPSHOT_DIR, as names. */
export function snapshotFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.sql')) found.push(path.relative(SNAPSHOT_DIR, full).replace(/\.sql$/, ''));
    }
  };
  try {
    walk(SNAPSHOT_DIR);
  } catch {
    return [];
  }
  return found.sort();
}

export function writeSnapshots(snapshots: Snapshot[]): void {
  rmSync(SNAPSHOT_DIR, { recursive: true, force: true });
  for (const snapshot of snapshots) {
    const file = path.join(SNAPSHOT_DIR, `${snapshot.name}.sql`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, snapshotText(snapshot));
  }
}

export function readSnapshot(name: string): string | null {
  try {
    return readFileSync(path.join(SNAPSHOT_DIR, `${name}.sql`), 'utf8');
  } catch {
    return null;
  }
}
