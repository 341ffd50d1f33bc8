import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createHash, type Hash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { AttachmentStore } from './attachment-store';

export interface S3StoreOptions {
  bucket: string;
  /** An S3-compatible endpoint (MinIO, s3rver...); unset or null: AWS S3 of `region`. */
  endpoint?: string | null;
  /** Unset or null: us-east-1. */
  region?: string | null;
  /** `endpoint/bucket/key` rather than `bucket.endpoint/key` (MinIO and local stores need it). */
  forcePathStyle?: boolean;
}

/** The only keys there are (attachment-store.ts); anything else is refused, and list() leaves other objects of the bucket alone. */
const KEY = /^(?:[0-9a-f-]{36}\/[0-9a-f]{64}|tmp\/[0-9a-f-]{36})$/;

/** S3's smallest part but the last. */
const PART_SIZE = 5 * 1024 * 1024;
/** Two parts on their way to S3 while the next is read: receiving overlaps sending. */
const QUEUE_SIZE = 2;
/** Tries of a part (or a small object) sent from its file. */
const FILE_ATTEMPTS = 4;

/**
 * Attachments' bytes in an S3 bucket (decisions.md section 24, docs/attachment-storage.md):
 * `<projectId>/<sha256>` and `tmp/<uuid>` as object keys. Credentials come from the SDK's usual
 * chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an instance or task role).
 */
export class S3AttachmentStore implements AttachmentStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      // Parts are streamed from files with a Content-MD5 of their own; the SDK's default CRC32 of a
      // streamed body is sent as aws-chunked encoding, which S3-compatible stores (s3rver) store as bytes.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      region: options.region ?? 'us-east-1',
      endpoint: options.endpoint ?? undefined,
      forcePathStyle: options.forcePathStyle ?? false,
      // Downloads hold a socket until the client has read them; the SDK's default of 50 would queue the 51st.
      requestHandler: { httpAgent: { maxSockets: 256 }, httpsAgent: { maxSockets: 256 } },
    });
  }

  async writeTemporary(body: Readable): Promise<string> {
    const key = `tmp/${randomUUID()}`;
    const spool = await mkdtemp(path.join(tmpdir(), 'attachment-upload-'));
    const inFlight = new Set<Promise<void>>();
    const parts: CompletedPart[] = [];
    let uploadId: string | undefined;
    let failure: unknown;
    let part: SpooledPart | undefined;
    const send = (sealed: SpooledPart, id: string) => {
      const sending = this.sendFile(sealed.file, (Body) =>
        this.client.send(
          new UploadPartCommand({
            Bucket: this.bucket,
            Key: key,
            UploadId: id,
            PartNumber: sealed.number,
            Body,
            ContentLength: sealed.size,
            ContentMD5: sealed.md5,
          }),
        ),
      )
        .then(async ({ ETag }) => {
          parts.push({ PartNumber: sealed.number, ETag });
          await rm(sealed.file, { force: true });
        })
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => inFlight.delete(sending));
      inFlight.add(sending);
    };
    try {
      part = new SpooledPart(spool, 1);
      for await (const chunk of body as AsyncIterable<Buffer>) {
        for (let at = 0; at < chunk.length;) {
          const piece = chunk.subarray(at, at + PART_SIZE - part.size);
          at += piece.length;
          await part.write(piece);
          if (part.size < PART_SIZE) continue;
          await part.seal();
          uploadId ??= (await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }))).UploadId!;
          send(part, uploadId);
          part = new SpooledPart(spool, part.number + 1);
          // Backpressure: the body is read on only while fewer than QUEUE_SIZE parts are on their way.
          while (inFlight.size >= QUEUE_SIZE) await Promise.race(inFlight);
          if (failure) throw failure;
        }
      }
      await part.seal();
      if (uploadId === undefined) {
        // Smaller than a part: one PutObject.
        const { size, md5 } = part;
        await this.sendFile(part.file, (Body) =>
          this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body, ContentLength: size, ContentMD5: md5 })),
        );
        return key;
      }
      if (part.size > 0) send(part, uploadId);
      await Promise.all(inFlight);
      if (failure) throw failure;
      parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
      );
      return key;
    } catch (error) {
      await Promise.all(inFlight);
      // S3 then frees the parts; a crash before this leaves them to the bucket's lifecycle rule (docs/attachment-storage.md).
      if (uploadId !== undefined) {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
      }
      throw error;
    } finally {
      part?.destroy();
      await rm(spool, { recursive: true, force: true });
    }
  }

  async promote(temporaryKey: string, key: string): Promise<void> {
    this.check(temporaryKey);
    // Content-addressed: an object at `key` already holds these bytes, so only the copy is saved.
    if (!(await this.exists(key))) {
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.check(key), CopySource: `${this.bucket}/${temporaryKey}` }));
    }
    await this.remove(temporaryKey);
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    // Resolves once S3 has answered with headers: a missing object rejects here, not in the middle of an answer.
    const answer = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.check(key),
        Range: range ? `bytes=${range.start}-${range.end}` : undefined,
      }),
    );
    const body = answer.Body as Readable;
    if (!range) return body;
    // Some S3-compatible stores answer a range with more than asked (s3rver: the whole object for
    // `bytes=0-0`); the answer's Content-Length is the service's promise, so cut to what was asked.
    const served = /^bytes (\d+)-(\d+)\//.exec(answer.ContentRange ?? '');
    const servedStart = served ? Number(served[1]) : 0;
    if (servedStart === range.start && served && Number(served[2]) === range.end) return body;
    if (servedStart > range.start) {
      body.destroy();
      throw new Error(`The bucket answered bytes from ${servedStart} to a range from ${range.start}`);
    }
    return body.pipe(byteSlice(range.start - servedStart, range.end - range.start + 1, body));
  }

  async remove(key: string): Promise<void> {
    // S3 answers 204 whether or not there was an object.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.check(key) }));
  }

  async *list(): AsyncIterable<{ key: string; modifiedAt: Date }> {
    let continuationToken: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, ContinuationToken: continuationToken }));
      for (const object of page.Contents ?? []) {
        if (object.Key && object.LastModified && KEY.test(object.Key)) yield { key: object.Key, modifiedAt: object.LastModified };
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);
  }

  /**
   * Sends a command whose body is `file`, again on a dropped connection or a 5xx: the SDK cannot
   * retry a stream it has consumed, but the file can be read again (a stale keep-alive socket is
   * enough to lose a part otherwise).
   */
  private async sendFile<Output>(file: string, send: (body: Readable) => Promise<Output>): Promise<Output> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(createReadStream(file));
      } catch (error) {
        const status = error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
        if (attempt === FILE_ATTEMPTS || (status !== undefined && status < 500)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
      }
    }
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.check(key) }));
      return true;
    } catch (error) {
      if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) return false;
      throw error;
    }
  }

  private check(key: string): string {
    if (!KEY.test(key)) throw new Error(`Not an attachment store key: ${JSON.stringify(key)}`);
    return key;
  }
}

/** The `length` bytes after the first `skip` of a stream; `source` is destroyed once they have passed. */
function byteSlice(skip: number, length: number, source: Readable): Transform {
  let position = 0;
  const end = skip + length;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const from = Math.max(skip - position, 0);
      const to = Math.min(end - position, chunk.length);
      position += chunk.length;
      if (to > from) this.push(chunk.subarray(from, to));
      if (position >= end) {
        source.unpipe(this);
        source.destroy();
        this.push(null);
      }
      done();
    },
  });
}

/**
 * One part of an upload, written to a file as the body arrives and sent to S3 from there: bytes of
 * an upload wait on disk, not in memory (lib-storage's Upload, which holds parts in Buffers, was
 * measured at 15 MiB an upload: docs/attachment-storage.md).
 */
class SpooledPart {
  readonly file: string;
  size = 0;
  md5 = '';
  private readonly out: WriteStream;
  private readonly hash: Hash = createHash('md5');

  constructor(
    spool: string,
    readonly number: number,
  ) {
    this.file = path.join(spool, String(number));
    this.out = createWriteStream(this.file);
    // A disk error between two writes is kept for the next write or seal (which reject with it), not thrown at the process.
    this.out.on('error', () => undefined);
  }

  async write(bytes: Buffer): Promise<void> {
    if (this.out.errored) throw this.out.errored;
    this.size += bytes.length;
    this.hash.update(bytes);
    if (!this.out.write(bytes)) await once(this.out, 'drain');
  }

  async seal(): Promise<void> {
    this.out.end();
    await finished(this.out);
    this.md5 = this.hash.digest('base64');
  }

  destroy(): void {
    this.out.destroy();
  }
}
