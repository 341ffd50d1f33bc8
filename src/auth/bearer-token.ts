import type { Request } from 'express';

/** The token of `Authorization: Bearer <token>`, or null without one: project keys and the admin token alike. */
export function bearerToken(request: Request): string | null {
  return /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1] ?? null;
}
