import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

const CLIENT_REQUEST_ID = /^[\w.:-]{1,100}$/;

/** Gives every request an id (the client's X-Request-Id when sensible), echoed in the answer and in error logs. */
export function requestId(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    next();
  };
}
