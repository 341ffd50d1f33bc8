import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

// decisions.md section 15: a client's id is kept when it is this, else the service makes one.
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The first middleware of every request: notes when it arrived and gives it an id (the
 * client's X-Request-Id when it is sensible), echoed on the answer and written on every log
 * line of the request.
 */
export function requestId(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    req.startedAt = performance.now();
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    next();
  };
}
