import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * A path segment that does not percent-decode to UTF-8 (`/api/v1/tasks/%FF`, `%E2%82`, a `%` that
 * encodes nothing) is read as its text as sent, `%FF`: the router would fail to decode it and
 * answer 400 before any guard (no rate limit, no key check). So it reaches the route it names, after
 * the guards like any request: as an id it names nothing (PathIdPipe: ids are UUIDs), 404 once
 * the rest is validated; elsewhere no endpoint serves the path (404). Its `%` is escaped for the
 * router (`%25FF`), nothing else changes; `originalUrl` keeps the path as sent.
 */
export function undecodablePathSegmentsAsSent(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const end = req.url.indexOf('?');
    const path = end === -1 ? req.url : req.url.slice(0, end);
    if (path.includes('%')) {
      const asSent = path
        .split('/')
        .map((segment) => (decodes(segment) ? segment : segment.replaceAll('%', '%25')))
        .join('/');
      if (asSent !== path) req.url = asSent + (end === -1 ? '' : req.url.slice(end));
    }
    next();
  };
}

/** What the router does to a path parameter (decodeURIComponent), without the throw. */
function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}
