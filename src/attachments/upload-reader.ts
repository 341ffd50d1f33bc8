import { HttpStatus } from '@nestjs/common';
import busboy from 'busboy';
import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { invalidFields, Problem } from '../common/errors/problem';
import { lastSegment, nameProblem } from './attachment-name';
import { UploadInspector } from './content-type';
import type { AttachmentStore } from './storage/attachment-store';

/** An upload read to its end: its bytes in a temporary object of the store. */
export interface ReceivedUpload {
  name: string;
  temporaryKey: string;
  size: number;
  sha256: string;
  contentType: string;
}

export interface UploadLimits {
  /** ATTACHMENT_MAX_BYTES: one byte more is 413 attachment_too_large. */
  maxBytes: number;
  /** Bytes the project may still add before its quota (read before the upload, checked again under its lock at commit). */
  room: number;
  /** What storage_quota_exceeded says: the quota and the project's usage before this upload. */
  quota: { limit: number; used: number };
}

const MULTIPART = /^multipart\/form-data\s*;/i;
/** A name part longer than this cannot be 255 code points (4 bytes each at most). */
const MAX_NAME_BYTES = 1024;

/** Whether the request's body is multipart/form-data (with its boundary): anything else is 415. */
export function isMultipart(req: Request): boolean {
  return MULTIPART.test(req.headers['content-type'] ?? '');
}

export function notMultipart(): Problem {
  return new Problem(
    HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    'unsupported_media_type',
    'An upload is sent as Content-Type: multipart/form-data, with a part named file (curl -F file=@path)',
  );
}

export function attachmentTooLarge(limit: number): Problem {
  return new Problem(
    HttpStatus.PAYLOAD_TOO_LARGE,
    'attachment_too_large',
    `The file is larger than ${limit} bytes (ATTACHMENT_MAX_BYTES)`,
    undefined,
    {
      limit,
    },
  );
}

export function quotaExceeded(quota: { limit: number; used: number }): Problem {
  return new Problem(
    HttpStatus.PAYLOAD_TOO_LARGE,
    'storage_quota_exceeded',
    `The project's attachments would take more than its quota of ${quota.limit} bytes (${quota.used} used): delete some, or purge tasks from the trash`,
    undefined,
    { limit: quota.limit, used: quota.used },
  );
}

/**
 * Reads an upload (decisions.md section 24) as it arrives: the multipart body is parsed by
 * busboy, the `file` part streamed through an UploadInspector (size, SHA-256, magic numbers)
 * into a temporary object of `store`, never held whole. A problem found on the way (a part
 * other than `file` and `name`, the size limit passed, the quota passed) is answered at once:
 * the rest of the body is dropped (the connection closes if much is still coming) and what
 * was written is removed.
 */
export function receiveUpload(req: Request, res: Response, store: AttachmentStore, limits: UploadLimits): Promise<ReceivedUpload> {
  return new Promise<ReceivedUpload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // One byte over the limit is how busboy tells that it was passed.
        limits: { fileSize: limits.maxBytes + 1, fieldSize: MAX_NAME_BYTES, fields: 10, files: 10, parts: 20 },
        defParamCharset: 'utf8',
      });
    } catch {
      return reject(notMultipart());
    }
    let settled = false;
    let filename: string | undefined;
    let namePart: string | undefined;
    let inspector: UploadInspector | undefined;
    let written: Promise<string> | undefined;

    const fail = (problem: Problem) => {
      if (settled) return;
      settled = true;
      stopReading(req, res, parser);
      inspector?.destroy(problem);
      // Answered once what was written is gone ("nothing is kept"): the store removes a write that
      // failed; one that finished just before (the limit passed in its last chunk) is removed here.
      const removed = written?.then(
        (key) => store.remove(key),
        () => undefined,
      );
      void settledWithin(removed, CLEAN_UP_MS).then(() => reject(problem));
    };

    parser.on('file', (field: string, stream: Readable, info: busboy.FileInfo) => {
      if (field !== 'file') return fail(unknownPart(field));
      if (inspector) return fail(invalidFields('validation_failed', [{ field: 'file', message: 'must be sent once' }]));
      filename = lastSegment(info.filename ?? '');
      const checking = new UploadInspector((size) => {
        if (size > limits.maxBytes) fail(attachmentTooLarge(limits.maxBytes));
        else if (size > limits.room) fail(quotaExceeded(limits.quota));
      });
      inspector = checking;
      // Whatever ends the upload early ends these too; the store's promise says how it went.
      checking.on('error', () => undefined);
      pipeline(stream, checking).catch(() => undefined);
      written = store.writeTemporary(checking);
      written.catch(() => undefined);
    });
    parser.on('field', (field: string, value: string, info: busboy.FieldInfo) => {
      if (field === 'file') return fail(invalidFields('validation_failed', [{ field: 'file', message: 'must be a file (a part with a filename)' }]));
      if (field !== 'name') return fail(unknownPart(field));
      if (info.valueTruncated) return fail(invalidFields('validation_failed', [nameProblem('x'.repeat(256), 'name')!]));
      namePart = value;
    });
    parser.on('error', () => fail(invalidFields('validation_failed', [{ field: 'file', message: 'the multipart body could not be read' }])));
    req.on('aborted', () => fail(invalidFields('validation_failed', [{ field: 'file', message: 'the body ended early' }])));
    parser.on('close', () => {
      void (async () => {
        if (settled) return;
        if (!inspector || !written) return fail(invalidFields('validation_failed', [{ field: 'file', message: 'is required: a part named file' }]));
        let temporaryKey: string;
        try {
          temporaryKey = await written;
        } catch {
          return fail(invalidFields('validation_failed', [{ field: 'file', message: 'the file could not be read to its end' }]));
        }
        if (settled) return;
        const name = namePart ?? filename ?? '';
        const problems = [
          ...(inspector.size === 0 ? [{ field: 'file', message: 'must not be empty' }] : []),
          ...[nameProblem(name, namePart !== undefined ? 'name' : 'file')].filter((problem) => problem !== null),
        ];
        if (problems.length) {
          settled = true;
          await store.remove(temporaryKey).catch(() => undefined);
          return reject(invalidFields('validation_failed', problems));
        }
        settled = true;
        resolve({ name, temporaryKey, size: inspector.size, sha256: inspector.sha256(), contentType: inspector.contentType() });
      })();
    });
    req.pipe(parser);
  });
}

/** How long a refused upload's answer waits for its bytes to be removed; the sweeper removes what a slower store leaves. */
const CLEAN_UP_MS = 5000;

/** Resolves when `work` settles, or after `ms`, whichever is first; never rejects. */
function settledWithin(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!work) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    void work
      .catch(() => undefined)
      .then(() => {
        clearTimeout(timer);
        resolve();
      });
  });
}

/** How long a refused upload's remaining body is read and dropped after the answer, at most; then the connection is closed. */
const LINGER_MS = 2000;
/** How many bytes of a refused upload's remaining body are read and dropped, at most; then the connection is closed. */
const DRAIN_BYTES = 1024 * 1024;

/**
 * For an answer sent before the body's end (decisions.md section 24: a 413 as soon as the limit is
 * passed; a 404 or 415 before reading). Once the answer is sent, what the client still sends is
 * read and dropped, up to DRAIN_BYTES or LINGER_MS, and only past those is the connection closed:
 * closing a socket with unread data sends a reset, which can make the client lose the answer it
 * has not read yet (seen on a loaded test machine). A small body thus ends cleanly and its
 * connection stays usable.
 */
export function dropRestOfBody(req: Request, res: Response): void {
  res.once('finish', () => {
    if (req.complete) return;
    let drained = 0;
    const close = () => req.socket.destroy();
    const timer = setTimeout(close, LINGER_MS).unref();
    req.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN_BYTES) {
        clearTimeout(timer);
        close();
      }
    });
    req.once('end', () => clearTimeout(timer));
    req.resume();
  });
  res.once('close', () => {
    if (!res.writableFinished) req.socket.destroy();
  });
}

function stopReading(req: Request, res: Response, parser: busboy.Busboy): void {
  req.unpipe(parser);
  req.pause();
  dropRestOfBody(req, res);
}

function unknownPart(field: string): Problem {
  return invalidFields('unknown_field', [{ field, message: 'is not a part of an upload: send file and, optionally, name' }]);
}
