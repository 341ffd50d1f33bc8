import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AttachmentStore } from './attachment-store';

/** The only keys there are: `<projectId>/<sha256>` and `tmp/<uuid>` (attachment-store.ts); anything else is refused before it becomes a path. */
const KEY = /^(?:[0-9a-f-]{36}\/[0-9a-f]{64}|tmp\/[0-9a-f-]{36})$/;

/**
 * Attachments' bytes as files under one directory (ATTACHMENTS_DIR): `<dir>/<projectId>/<sha256>`
 * and `<dir>/tmp/<uuid>`. A temporary file becomes the bytes of its key by a rename, which is
 * atomic on one file system: a reader sees the old file or the new one, never a part.
 */
export class DirectoryAttachmentStore implements AttachmentStore {
  constructor(private readonly root: string) {}

  async writeTemporary(body: Readable): Promise<string> {
    const key = `tmp/${randomUUID()}`;
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    try {
      await pipeline(body, createWriteStream(file, { flags: 'wx' }));
      // Durable before the row that names it commits: a crash then finds the bytes there.
      const handle = await open(file, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    return key;
  }

  async promote(temporaryKey: string, key: string): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(this.pathOf(temporaryKey), target);
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    // Opened first, so that a missing file rejects here rather than in the middle of an answer.
    const handle = await open(this.pathOf(key), 'r');
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async *list(): AsyncIterable<{ key: string; modifiedAt: Date }> {
    for (const directory of await entries(this.root)) {
      for (const name of await entries(path.join(this.root, directory))) {
        const key = `${directory}/${name}`;
        if (!KEY.test(key)) continue;
        const stats = await stat(this.pathOf(key)).catch(() => null);
        if (stats?.isFile()) yield { key, modifiedAt: stats.mtime };
      }
    }
  }

  private pathOf(key: string): string {
    if (!KEY.test(key)) throw new Error(`Not an attachment store key: ${JSON.stringify(key)}`);
    return path.join(this.root, ...key.split('/'));
  }
}

/** The names in `directory`, none when it does not exist (yet). */
async function entries(directory: string): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}
