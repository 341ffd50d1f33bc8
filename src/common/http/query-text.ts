import { isUtf8 } from 'node:buffer';
import { unescape } from 'node:querystring';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { invalidFields, Problem } from '../errors/problem';
import { NOT_UNICODE_TEXT, PROTOTYPE_KEYS } from './strict-json';

/**
 * Refuses a query parameter whose percent-decoded bytes are not UTF-8 (`?q=%FF`): Express reads
 * query strings with Node's querystring, which puts U+FFFD in their place silently, and the
 * service would search for, or store, what was not sent. (A lone surrogate cannot come out of
 * a query string: UTF-8 has no encoding for one, and Node's parser refuses a URL with raw bytes
 * outside ASCII.)
 * A parameter named like what every object inherits (`toString`, `__proto__`) is 400 unknown_field:
 * class-transformer would drop it unseen (strict-json.ts).
 * Like a body problem, it is kept on the request and answered by RequestShapeInterceptor after
 * the guards: 400 naming the parameter.
 */
export function queryTextChecking(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const start = req.url.indexOf('?');
    if (start !== -1) req.queryProblem = firstQueryProblem(req.url.slice(start + 1));
    next();
  };
}

const PERCENT_ENCODED_BYTE = /%([0-9a-f]{2})/gi;

function firstQueryProblem(query: string): Problem | undefined {
  for (const parameter of query.split('&')) {
    const equals = parameter.indexOf('=');
    const name = equals === -1 ? parameter : parameter.slice(0, equals);
    // A name objects inherit (`toString`) would pass the whitelist unseen (strict-json.ts).
    if (PROTOTYPE_KEYS.has(safeUnescape(name))) {
      return invalidFields('unknown_field', [{ field: safeUnescape(name), message: 'is not a field of this request' }]);
    }
    if (!parameter.includes('%')) continue;
    // The bytes querystring decodes a name and value to: each %XX one byte, any other (ASCII)
    // character as it is, a malformed % included.
    const bytes = Buffer.from(
      parameter.replace(PERCENT_ENCODED_BYTE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    );
    if (!isUtf8(bytes)) {
      return invalidFields('validation_failed', [{ field: unescape(name), message: NOT_UNICODE_TEXT }]);
    }
  }
  return undefined;
}

/** A query parameter's name as querystring decodes it (`+` a space). */
function safeUnescape(name: string): string {
  return unescape(name.replaceAll('+', ' '));
}
