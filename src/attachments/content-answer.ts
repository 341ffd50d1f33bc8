import { HttpStatus } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Problem } from '../common/errors/problem';
import { noneMatchIsCurrent } from '../common/http/entity-tag';

/** The types a browser may show in place (decisions.md section 24); every other is downloaded, so an SVG or HTML page never runs. */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** What serveContent needs of an attachment. */
export interface ServedAttachment {
  name: string;
  size: number;
  contentType: string;
  sha256: string;
}

/**
 * An attachment's bytes as decisions.md section 24 serves them, by its key or its downloadUrl:
 * `ETag: "<sha256>"` (If-None-Match: 304), one `Range` (206, or 416 when it starts past the end;
 * several ranges are answered whole), and the headers that keep a browser from running what it
 * gets: nosniff, a sandboxing Content-Security-Policy, and Content-Disposition.
 */
export async function serveContent(
  req: Request,
  res: Response,
  attachment: ServedAttachment,
  open: (range?: { start: number; end: number }) => Promise<Readable>,
): Promise<void> {
  const tag = `"${attachment.sha256}"`;
  res.setHeader('ETag', tag);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
  res.setHeader('Cache-Control', 'private, no-cache');
  if (noneMatchIsCurrent(req.headers['if-none-match'], tag)) {
    res.status(HttpStatus.NOT_MODIFIED).end();
    return;
  }
  const range = requestedRange(req.headers.range, attachment.size);
  if (range === 'unsatisfiable') {
    throw new Problem(
      HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE,
      'range_not_satisfiable',
      `The range starts past the end of the file (${attachment.size} bytes)`,
      undefined,
      {},
      { 'Content-Range': `bytes */${attachment.size}` },
    );
  }
  const body = await open(range ?? undefined);
  res.setHeader('Content-Type', attachment.contentType);
  res.setHeader('Content-Disposition', contentDisposition(attachment.name, attachment.contentType));
  if (range) {
    res.status(HttpStatus.PARTIAL_CONTENT);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${attachment.size}`);
    res.setHeader('Content-Length', String(range.end - range.start + 1));
  } else {
    res.status(HttpStatus.OK);
    res.setHeader('Content-Length', String(attachment.size));
  }
  if (req.method === 'HEAD') {
    body.destroy();
    res.end();
    return;
  }
  // A client that leaves mid-way ends the pipeline; there is nobody left to answer.
  await pipeline(body, res).catch(() => undefined);
}

/**
 * `Content-Disposition: attachment; filename*=UTF-8''<name>` (RFC 6266, RFC 8187), the name
 * percent-encoded so that no character of it (a quote, a newline, an RTL mark) can break the
 * header; `inline` for the image types a browser only displays.
 */
export function contentDisposition(name: string, contentType: string): string {
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${INLINE_TYPES.has(contentType) ? 'inline' : 'attachment'}; filename*=UTF-8''${encoded}`;
}

/**
 * The one range a `Range` header asks for (RFC 9110 section 14), clipped to the file; null when
 * there is none, or it is not one byte range this answers (several ranges, another unit, bad
 * syntax: the whole file, as the RFC allows); 'unsatisfiable' when it starts past the end.
 */
export function requestedRange(header: string | undefined, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  const match = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    // A suffix: the last n bytes.
    const length = Number(match[2]);
    if (length === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
