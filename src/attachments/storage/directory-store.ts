import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AttachmentStore } from './attachment-store';

const KEY = /^(?:[0-9a-f-]{36}\/[0-9a-f]{64}|tmp\/[0-9a-f-]{36})$/;

/**
 * A minimal directory store for the S3 branch's store contract test, to be replaced by the
 * attachments branch's DirectoryAttachmentStore when the branches merge: `<root>/<key>` files.
 */
export class DirectoryAttachmentStore implements AttachmentStore {
  constructor(private readonly root: string) {}

  async writeTemporary(body: Readable): Promise<string> {
    const key = `tmp/${randomUUID()}`;
    await mkdir(path.join(this.root, 'tmp'), { recursive: true });
    try {
      await pipeline(body, createWriteStream(this.pathOf(key), { flags: 'wx' }));
    } catch (error) {
      await rm(this.pathOf(key), { force: true });
      throw error;
    }
    return key;
  }

  async promote(temporaryKey: string, key: string): Promise<void> {
    await mkdir(path.dirname(this.pathOf(key)), { recursive: true });
    await rename(this.pathOf(temporaryKey), this.pathOf(key));
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const handle = await open(this.pathOf(key), 'r');
    await handle.close();
    return createReadStream(this.pathOf(key), range ?? {});
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async *list(): AsyncIterable<{ key: string; modifiedAt: Date }> {
    for (const directory of await readdir(this.root).catch(() => [])) {
      for (const name of await readdir(path.join(this.root, directory)).catch(() => [])) {
        const key = `${directory}/${name}`;
        if (KEY.test(key)) yield { key, modifiedAt: (await stat(this.pathOf(key))).mtime };
      }
    }
  }

  private pathOf(key: string): string {
    if (!KEY.test(key)) throw new Error(`Not an attachment store key: ${JSON.stringify(key)}`);
    return path.join(this.root, ...key.split('/'));
  }
}
