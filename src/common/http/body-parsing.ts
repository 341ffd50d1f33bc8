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
    if (!hasBody(req)) return next();
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
        const text = utf8Text(bytes as Buffer);
        // An empty chunked body reads as {}, as it always has (the fields' rules then answer).
        req.body = text === '' ? {} : parseJsonObject(text);
      } catch (problem) {
        if (!(problem instanceof Problem)) return next(problem);
        req.bodyProblem = problem;
      }
      next();
    });
  };
}

/**
 * The body as text, without a leading byte order mark. A byte sequence that is not UTF-8 reads as
 * a lone surrogate, which strict-json.ts refuses, naming the field, like one sent as `\ud800`:
 * never as the U+FFFD a decoder puts in its place, which would be stored as if it had been sent.
 */
function utf8Text(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8').replace(/^\ufeff/, '');
  // A U+FFFD that was sent (EF BF BD) stays one: the decoder's own ones are in the pieces between.
  const pieces: string[] = [];
  let start = 0;
  for (let at = bytes.indexOf(UTF8_REPLACEMENT_CHARACTER); at !== -1; at = bytes.indexOf(UTF8_REPLACEMENT_CHARACTER, start)) {
    pieces.push(bytes.subarray(start, at).toString('utf8').replaceAll('\ufffd', '\ud800'));
    start = at + UTF8_REPLACEMENT_CHARACTER.length;
  }
  pieces.push(bytes.subarray(start).toString('utf8').replaceAll('\ufffd', '\ud800'));
  return pieces.join('\ufffd').replace(/^\ufeff/, '');
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
