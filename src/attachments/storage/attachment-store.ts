// src/attachments/storage/attachment-store.ts — create it with exactly this content (both the
// attachments branch and the S3 branch create it; identical text merges cleanly). Extend it only
// by adding members, and say so in your report.
import type { Readable } from 'node:stream';

/**
 * Where attachments' bytes live: a directory or an S3-compatible bucket (decisions.md section
 * 24). Keys are the service's own: `<projectId>/<sha256>` for committed bytes and
 * `tmp/<uuid>` while an upload is under way; a client's file name is never part of a key.
 */
export interface AttachmentStore {
  /**
   * Streams `body` to a new temporary object and resolves with its key once every byte is
   * durably written. Rejects when `body` errors or is destroyed; what it had written is then
   * removed or left for the sweeper (it is under `tmp/`).
   */
  writeTemporary(body: Readable): Promise<string>;
  /** Makes the temporary object the bytes at `key` and removes the temporary one. Same key, same bytes: keeping the existing object is fine. */
  promote(temporaryKey: string, key: string): Promise<void>;
  /** The bytes at `key`, whole or the inclusive byte `range`. */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /** Removes the object at `key`; no error when there is none. */
  remove(key: string): Promise<void>;
  /** Every object with its last-modified time, temporary ones included: what the sweeper reads. */
  list(): AsyncIterable<{ key: string; modifiedAt: Date }>;
}

/** The Nest injection token of the one AttachmentStore of the app. */
export const ATTACHMENT_STORE = Symbol('AttachmentStore');
