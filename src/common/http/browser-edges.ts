import { Header } from '@nestjs/common';
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { surfaceOf } from './surface';

/**
 * The headers every browser-facing answer carries (decisions.md section 22), set once here.
 *
 * The answer headers a script on another origin may read (CORS hides any other), named one by
 * one: a wildcard is not honoured by every browser on requests that carry Authorization.
 */
export const EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-Request-Id',
  'Idempotent-Replayed',
] as const;

/** The paths served to scripts of other origins: the API and its OpenAPI document. */
export const CORS_PATHS = ['/api/v1', '/docs'] as const;

// How long a browser may reuse a preflight's answer: fewer OPTIONS round trips (Chromium caps it at 2 h).
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for the API (the `cors` package): a preflight (OPTIONS) is answered 204 here, before any
 * key check. `origins` null lets any origin call (keys travel in a header, never in cookies, so a
 * page of another origin can use only a key it was given); a list restricts it to those
 * (CORS_ORIGINS), and answers `Vary: Origin`.
 */
export function corsForApi(origins: readonly string[] | null): RequestHandler {
  const exposedHeaders = EXPOSED_HEADERS.join(',');
  const handler = cors({ origin: origins ? [...origins] : '*', exposedHeaders, maxAge: PREFLIGHT_MAX_AGE_SECONDS });
  if (origins) return handler;
  // Any origin: to every request but a preflight the package answers these two fixed headers,
  // after rebuilding its options and header list for each request (measured in README
  // "Performance"): set here, the same bytes; preflights stay the package's.
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'OPTIONS') return handler(req, res, next);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', exposedHeaders);
    next();
  };
}

/**
 * `X-Content-Type-Options: nosniff` on every answer (a browser never reads JSON as a script or
 * a page), and `Cache-Control: private, no-cache` on the API's and the admin interface's (a shared
 * cache keeps no copy of a project's data; a browser revalidates with its ETag before reusing one).
 */
export function standardHeaders(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (surfaceOf(req) !== 'other') res.setHeader('Cache-Control', 'private, no-cache');
    next();
  };
}

/** On a route whose answer shows a secret (a key, a signing secret): no cache may store it, not even the browser's. */
export const ShowsSecret = (): MethodDecorator => Header('Cache-Control', 'no-store');
