import { Transform, type TransformCallback } from 'node:stream';
import { createHash } from 'node:crypto';
import { filetypeinfo } from 'magic-bytes.js';

/** Bytes the magic-number detector looks at: the longest signature it knows sits in the first few KiB (tar's at 257). */
const HEAD_BYTES = 4100;

/**
 * magic-bytes.js's signatures of one or two printable characters, and what confirms each: text
 * starts so every day ("Groceries", "[draft]", "BMW"). JSON (`{`, `[`) is text, which the UTF-8
 * rule names; MPEG-TS (`G`, its sync byte) repeats it at the next 188-byte packet; a BMP (`BM`)
 * holds NUL in its header, so it is never text; EOT's `PL` is where no EOT has it (its `LP` sits
 * at offset 34), so it confirms nothing.
 */
const WEAK_SIGNATURES: { typename: string; start: string; confirmed: (head: Buffer, text: boolean) => boolean }[] = [
  { typename: 'Json', start: '{', confirmed: () => false },
  { typename: 'Json', start: '[', confirmed: () => false },
  { typename: 'mpeg', start: 'G', confirmed: (head) => head[188] === 0x47 },
  { typename: 'eot', start: 'PL', confirmed: () => false },
  { typename: 'bmp', start: 'BM', confirmed: (_head, text) => !text },
];

/**
 * What passes through an upload: counted, hashed (SHA-256) and looked at, on the way to the
 * store, so that nothing is held whole (decisions.md section 24). `onSize` sees the count after
 * each chunk and may destroy the stream to stop it.
 */
export class UploadInspector extends Transform {
  size = 0;
  private readonly hash = createHash('sha256');
  private readonly head: Buffer[] = [];
  private headLength = 0;
  // The UTF-8 rule needs every byte, but only while no magic number answered.
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private text = true;

  constructor(private readonly onSize: (size: number) => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    if (this.headLength < HEAD_BYTES) {
      this.head.push(chunk.subarray(0, HEAD_BYTES - this.headLength));
      this.headLength += Math.min(chunk.length, HEAD_BYTES - this.headLength);
    }
    if (this.text) this.text = isUtf8TextChunk(this.decoder, chunk);
    done(null, chunk);
    this.onSize(this.size);
  }

  /** The SHA-256 of what passed, in lower-case hex: once the stream has ended. */
  sha256(): string {
    return this.hash.digest('hex');
  }

  /** What the bytes are (decisions.md section 24): their magic numbers, else the UTF-8 rule. */
  contentType(): string {
    const head = Buffer.concat(this.head);
    const text = this.isText();
    const start = head.subarray(0, 2).toString('latin1');
    const detected = filetypeinfo(head).find(
      (guess) =>
        guess.mime !== undefined &&
        !WEAK_SIGNATURES.some((weak) => weak.typename === guess.typename && start.startsWith(weak.start) && !weak.confirmed(head, text)),
    );
    if (detected) return detected.mime!;
    return text ? 'text/plain' : 'application/octet-stream';
  }

  /** Valid UTF-8 without NUL, to its last byte: once the stream has ended. */
  private isText(): boolean {
    if (!this.text) return false;
    try {
      this.decoder.decode();
    } catch {
      this.text = false;
    }
    return this.text;
  }
}

function isUtf8TextChunk(decoder: InstanceType<typeof TextDecoder>, chunk: Buffer): boolean {
  if (chunk.includes(0)) return false;
  try {
    decoder.decode(chunk, { stream: true });
    return true;
  } catch {
    return false;
  }
}
