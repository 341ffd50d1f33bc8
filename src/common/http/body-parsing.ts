import { HttpStatus } from '@nestjs/common';
import { isUtf8 } from 'node:buffer';
import { raw } from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Problem } from '../errors/problem';
import { parseJsonObject } from './strict-json';

/** Bodies over this size are 413 (decisions.md section 10). */
export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
// JSON exchanged between systems is UTF-8 (RFC 8259 section 8.1): another charset is 415.
const CHARSET_PARAMETER = /;\s*charset\s*=\s*"?([^";\s]*)/i;
const UTF8_REPLACEMENT_CHARACTER = Buffer.from('\ufffd');
const UTF8_BYTE_ORDER_MARK = Buffer.from('\ufeff');

/**
 * Reads JSON request bodies. A body problem (not JSON, malformed, not an object, too
 * large, and what strict-json.ts refuses) is not answered here: it is kept on the request
 * and answered by RequestShapeInterceptor after the guards, so that a request without a
 * valid key is a 401 whatever its body (decisions.md: authentication, then permission, then
 * validation).
 */
export function jsonBodyParsing(): RequestHandler {
  // The bytes as sent (gzip and deflate inflated, 413 past the limit): the decoding is ours.
  const read = raw({ limit: MAX_BODY_BYTES, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    // An upload's body is read as a stream by its route (src/attachments/upload-reader.ts), which answers 415 for anything but multipart.
    if (!hasBody(req) || isStreamedBodyRoute(req)) return next();
    const mediaType = req.headers['content-type'] ?? '';
    const charset = CHARSET_PARAMETER.exec(mediaType)?.[1];
    if (!JSON_MEDIA_TYPE.test(mediaType) || (charset !== undefined && charset.toLowerCase() !== 'utf-8')) {
      req.bodyProblem = unsupportedMediaType();
      req.resume();
      return next();
    }
    read(req, res, (error?: unknown) => {
      const bytes: unknown = req.body;
      req.body = undefined;
      if (error) {
        req.bodyProblem = problemFromReaderError(error);
        return next();
      }
      try {
        const { text, notUtf8At } = decodeUtf8(bytes as Buffer);
        // An empty chunked body reads as {}, as it always has (the fields' rules then answer).
        req.body = text === '' ? {} : parseJsonObject(text, notUtf8At);
      } catch (problem) {
        if (!(problem instanceof Problem)) return next(problem);
        req.bodyProblem = problem;
      }
      next();
    });
  };
}

/** A body's text, and where in it the decoder put U+FFFD in place of bytes that are not UTF-8. */
interface DecodedBody {
  text: string;
  /** Offsets in `text`, ascending; empty for a body that is UTF-8 throughout. */
  notUtf8At: number[];
}

/**
 * The body as text, without a leading byte order mark, and where it was not UTF-8: strict-json.ts
 * refuses a string holding such a place (naming the field), as it refuses a lone surrogate. The
 * text itself is never marked: a U+FFFD the decoder put there is not one that was sent.
 */
function decodeUtf8(bytes: Buffer): DecodedBody {
  if (bytes.subarray(0, UTF8_BYTE_ORDER_MARK.length).equals(UTF8_BYTE_ORDER_MARK)) bytes = bytes.subarray(UTF8_BYTE_ORDER_MARK.length);
  if (isUtf8(bytes)) return { text: bytes.toString('utf8'), notUtf8At: [] };
  // A U+FFFD that was sent (EF BF BD: EF is never a continuation byte, so no invalid sequence
  // takes it) separates the pieces; every U+FFFD inside a piece is the decoder's.
  const pieces: string[] = [];
  const notUtf8At: number[] = [];
  let offset = 0;
  let start = 0;
  let sent: number;
  do {
    sent = bytes.indexOf(UTF8_REPLACEMENT_CHARACTER, start);
    const piece = bytes.subarray(start, sent === -1 ? bytes.length : sent).toString('utf8');
    for (let at = piece.indexOf('\ufffd'); at !== -1; at = piece.indexOf('\ufffd', at + 1)) notUtf8At.push(offset + at);
    pieces.push(piece);
    offset += piece.length + 1;
    start = sent + UTF8_REPLACEMENT_CHARACTER.length;
  } while (sent !== -1);
  return { text: pieces.join('\ufffd'), notUtf8At };
}

/** The one route whose body is not JSON: POST /api/v1/tasks/{taskId}/attachments (decisions.md section 24). */
const STREAMED_BODY_ROUTE = /^\/api\/v1\/tasks\/[^/]+\/attachments\/?$/;

function isStreamedBodyRoute(req: Request): boolean {
  return req.method === 'POST' && STREAMED_BODY_ROUTE.test(req.path);
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function problemFromReaderError(error: unknown): Problem {
  switch ((error as { type?: string }).type) {
    case 'entity.too.large':
      return new Problem(HttpStatus.PAYLOAD_TOO_LARGE, 'payload_too_large', `The body is larger than ${MAX_BODY_BYTES} bytes`);
    case 'encoding.unsupported':
      return unsupportedMediaType();
    default:
      return new Problem(HttpStatus.BAD_REQUEST, 'malformed_json', 'the body could not be read');
  }
}

function unsupportedMediaType(): Problem {
  return new Problem(HttpStatus.UNSUPPORTED_MEDIA_TYPE, 'unsupported_media_type', 'The body must be JSON sent as Content-Type: application/json');
}
