import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { randomUUID } from 'node:crypto';
import { type Readable, Transform } from 'node:stream';
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

/**
 * S3's smallest part but the last. lib-storage holds up to (QUEUE_SIZE + 1) parts of an upload in
 * memory: the price of streaming a body of unknown length into S3 (bench/results/attachments.md).
 */
const PART_SIZE = 5 * 1024 * 1024;
/** Two parts in flight: reading the next part overlaps sending this one. */
const QUEUE_SIZE = 2;

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
      region: options.region ?? 'us-east-1',
      endpoint: options.endpoint ?? undefined,
      forcePathStyle: options.forcePathStyle ?? false,
      // Downloads hold a socket until the client has read them; the SDK's default of 50 would queue the 51st.
      requestHandler: { httpAgent: { maxSockets: 256 }, httpsAgent: { maxSockets: 256 } },
    });
  }

  async writeTemporary(body: Readable): Promise<string> {
    const key = `tmp/${randomUUID()}`;
    // A multipart upload of unknown length, part by part as the body arrives; on an error lib-storage
    // aborts it (leavePartsOnError: false), so S3 keeps no parts. A body shorter than a part is one PutObject.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      // A body that ended in an error can still have been completed by S3 in a race; tmp/ keeps it at worst.
      await this.remove(key).catch(() => undefined);
      throw error;
    }
    return key;
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
