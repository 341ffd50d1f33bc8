import { HttpStatus } from '@nestjs/common';
import { json } from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Problem } from '../errors/problem';

/** Bodies over this size are 413 (decisions.md section 10). */
export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/**
 * Reads JSON request bodies. A body problem (not JSON, malformed, not an object, too
 * large) is not answered here: it is kept on the request and answered by
 * RequestShapeInterceptor after the guards, so that a request without a valid key is
 * a 401 whatever its body (decisions.md: authentication, then permission, then validation).
 */
export function jsonBodyParsing(): RequestHandler {
  const parse = json({ limit: MAX_BODY_BYTES, strict: true, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) return next();
    if (!JSON_MEDIA_TYPE.test(req.headers['content-type'] ?? '')) {
      req.bodyProblem = unsupportedMediaType();
      req.resume();
      return next();
    }
    parse(req, res, (error?: unknown) => {
      if (error) {
        req.body = undefined;
        req.bodyProblem = problemFromParserError(error);
      } else if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
        req.body = undefined;
        req.bodyProblem = malformed('the body must be a JSON object');
      }
      next();
    });
  };
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function problemFromParserError(error: unknown): Problem {
  switch ((error as { type?: string }).type) {
    case 'entity.too.large':
      return new Problem(HttpStatus.PAYLOAD_TOO_LARGE, 'payload_too_large', `The body is larger than ${MAX_BODY_BYTES} bytes`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedMediaType();
    default:
      return malformed('the body is not valid JSON');
  }
}

function unsupportedMediaType(): Problem {
  return new Problem(HttpStatus.UNSUPPORTED_MEDIA_TYPE, 'unsupported_media_type', 'The body must be JSON sent as Content-Type: application/json');
}

function malformed(detail: string): Problem {
  return new Problem(HttpStatus.BAD_REQUEST, 'malformed_json', detail);
}
