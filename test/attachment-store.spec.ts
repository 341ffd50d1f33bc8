import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { AttachmentStore } from '../src/attachments/storage/attachment-store';
import { DirectoryAttachmentStore } from '../src/attachments/storage/directory-store';
import { S3AttachmentStore } from '../src/attachments/storage/s3-store';
import { startS3Server } from './support/s3-server';

/**
 * The contract of AttachmentStore (src/attachments/storage/attachment-store.ts), the same cases on
 * every back end: what the attachment service relies on, whichever one holds the bytes.
 */
interface BackEnd {
  store: AttachmentStore;
  /** Bytes in the files behind the store (the directory, or s3rver's), parts of unfinished uploads included. */
  bytesOnDisk(): number;
  stop(): Promise<void>;
}

const BACK_ENDS: Array<[string, () => Promise<BackEnd>]> = [
  [
    'a directory',
    async () => {
      const root = mkdtempSync(path.join(tmpdir(), 'attachments-'));
      const store = new DirectoryAttachmentStore(root);
      return { store, bytesOnDisk: () => bytesUnder(root), stop: async () => rmSync(root, { recursive: true, force: true }) };
    },
  ],
  [
    'S3 (s3rver)',
    async () => {
      const s3 = await startS3Server();
      const store = new S3AttachmentStore({ bucket: s3.bucket, endpoint: s3.endpoint, forcePathStyle: true });
      return { store, bytesOnDisk: () => bytesUnder(s3.directory), stop: () => s3.stop() };
    },
  ],
];

const MiB = 1024 * 1024;
const PROJECT = '7d3c1a52-9a0e-4c47-8a55-0d6f4b1f2e11';
const keyOf = (bytes: Buffer) => `${PROJECT}/${createHash('sha256').update(bytes).digest('hex')}`;

describe.each(BACK_ENDS)('AttachmentStore on %s', (_name, start) => {
  jest.setTimeout(180_000);
  let backEnd: BackEnd;
  let store: AttachmentStore;
  beforeAll(async () => {
    backEnd = await start();
    store = backEnd.store;
  });
  afterAll(() => backEnd?.stop());

  it('writes a temporary object under tmp/ that reads back byte for byte', async () => {
    const bytes = randomBytes(70_000);
    const temporaryKey = await store.writeTemporary(Readable.from(chunks(bytes, 8192)));
    expect(temporaryKey).toMatch(/^tmp\/[0-9a-f-]{36}$/);
    expect(await readAll(store, temporaryKey)).toEqual(bytes);
  });

  it('promotes a temporary object to its key and removes the temporary one', async () => {
    const bytes = randomBytes(1000);
    const temporaryKey = await store.writeTemporary(Readable.from([bytes]));
    await store.promote(temporaryKey, keyOf(bytes));
    expect(await readAll(store, keyOf(bytes))).toEqual(bytes);
    await expect(store.read(temporaryKey)).rejects.toThrow();
    const keys = await listKeys(store);
    expect(keys).toContain(keyOf(bytes));
    expect(keys).not.toContain(temporaryKey);
  });

  it('promotes onto a key that already holds the same bytes, keeping them and removing the temporary object', async () => {
    const bytes = randomBytes(5000);
    await store.promote(await store.writeTemporary(Readable.from([bytes])), keyOf(bytes));
    const second = await store.writeTemporary(Readable.from([bytes]));
    await store.promote(second, keyOf(bytes));
    expect(await readAll(store, keyOf(bytes))).toEqual(bytes);
    expect(await listKeys(store)).not.toContain(second);
  });

  it('reads inclusive byte ranges: the first byte, the middle, the last byte, and all of it', async () => {
    const bytes = randomBytes(4096);
    await store.promote(await store.writeTemporary(Readable.from([bytes])), keyOf(bytes));
    for (const [start, end] of [
      [0, 0],
      [1, 3],
      [100, 2047],
      [4095, 4095],
      [0, 4095],
    ]) {
      expect(await readAll(store, keyOf(bytes), { start, end })).toEqual(bytes.subarray(start, end + 1));
    }
  });

  it('rejects reading a key that holds nothing', async () => {
    await expect(store.read(keyOf(randomBytes(8)))).rejects.toThrow();
  });

  it('removes an object, and removing what is not there is no error', async () => {
    const bytes = randomBytes(300);
    await store.promote(await store.writeTemporary(Readable.from([bytes])), keyOf(bytes));
    await store.remove(keyOf(bytes));
    await expect(store.read(keyOf(bytes))).rejects.toThrow();
    expect(await listKeys(store)).not.toContain(keyOf(bytes));
    await store.remove(keyOf(bytes));
    await store.remove('tmp/00000000-0000-4000-8000-000000000000');
  });

  it('lists every object with its last-modified time, temporary ones included, past one page of a thousand', async () => {
    const before = new Set(await listKeys(store));
    const since = Date.now() - 2000; // S3 keeps whole seconds
    const written: string[] = [];
    for (let batch = 0; batch < 21; batch++) {
      written.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => store.writeTemporary(Readable.from([Buffer.from(`${batch}.${i}`)]))))));
    }
    const bytes = randomBytes(10);
    await store.promote(await store.writeTemporary(Readable.from([bytes])), keyOf(bytes));
    const listed = new Map<string, Date>();
    for await (const object of store.list()) {
      expect(listed.has(object.key)).toBe(false); // no page twice
      listed.set(object.key, object.modifiedAt);
    }
    for (const key of [...written, keyOf(bytes)]) {
      expect(Object.prototype.toString.call(listed.get(key))).toBe('[object Date]'); // not instanceof: fs makes its Dates in another realm than Jest's
      expect(listed.get(key)!.getTime()).toBeGreaterThanOrEqual(since);
    }
    expect(listed.size).toBe(before.size + written.length + 1);
    // They stay (removed with the back end's files in afterAll): the tests after this one count what they add.
  });

  it('rejects when the body errors mid-way, and leaves nothing but tmp/ objects', async () => {
    const before = new Set(await listKeys(store));
    const failing = Readable.from(
      (async function* () {
        yield* chunks(randomBytes(12 * MiB), 256 * 1024); // past two parts of an S3 multipart upload
        throw new Error('the client went away');
      })(),
    );
    await expect(store.writeTemporary(failing)).rejects.toThrow();
    const added = (await listKeys(store)).filter((key) => !before.has(key));
    expect(added.filter((key) => !key.startsWith('tmp/'))).toEqual([]);
  });

  it('rejects when the body is destroyed without an error, and leaves nothing but tmp/ objects', async () => {
    const before = new Set(await listKeys(store));
    const body = new Readable({ read() {} });
    body.push(randomBytes(64 * 1024));
    const written = store.writeTemporary(body);
    setTimeout(() => body.destroy(), 50);
    await expect(written).rejects.toThrow();
    const added = (await listKeys(store)).filter((key) => !before.has(key));
    expect(added.filter((key) => !key.startsWith('tmp/'))).toEqual([]);
  });

  it('streams a 25 MiB body in parts: bytes reach storage before the body has ended', async () => {
    const size = 25 * MiB;
    const hash = createHash('sha256');
    const diskBefore = backEnd.bytesOnDisk();
    let stored = false;
    const body = Readable.from(
      (async function* () {
        for (let sent = 0; sent < size; sent += 256 * 1024) {
          // Fresh chunks, so that a store holding them all would hold 25 MiB.
          const chunk = randomBytes(256 * 1024);
          hash.update(chunk);
          yield chunk;
          if (sent === 20 * MiB) {
            // Held here until 5 MiB are in storage: a store that waits for the end of the body never gets there.
            const deadline = Date.now() + 60_000;
            while (backEnd.bytesOnDisk() - diskBefore < 5 * MiB) {
              if (Date.now() > deadline) throw new Error('nothing reached storage after 20 MiB of the body');
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
            stored = true;
          }
        }
      })(),
    );
    const temporaryKey = await store.writeTemporary(body);
    expect(stored).toBe(true);
    const key = `${PROJECT}/${hash.digest('hex')}`;
    await store.promote(temporaryKey, key);
    const read = createHash('sha256');
    let length = 0;
    for await (const chunk of await store.read(key)) {
      read.update(chunk as Buffer);
      length += (chunk as Buffer).length;
    }
    expect(length).toBe(size);
    expect(`${PROJECT}/${read.digest('hex')}`).toBe(key);
    const tail = await readAll(store, key, { start: size - 10, end: size - 1 });
    expect(tail).toHaveLength(10);
  });
});

function* chunks(bytes: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function readAll(store: AttachmentStore, key: string, range?: { start: number; end: number }): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of await store.read(key, range)) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

async function listKeys(store: AttachmentStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of store.list()) keys.push(object.key);
  return keys;
}

function bytesUnder(directory: string): number {
  let total = 0;
  try {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      total += entry.isDirectory() ? bytesUnder(full) : entry.isFile() ? statSync(full).size : 0;
    }
  } catch {
    // removed while counted: counts as nothing
  }
  return total;
}
