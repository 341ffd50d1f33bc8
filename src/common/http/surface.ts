import type { Request } from 'express';

/** The parts of the service that rules tell apart: the API, the admin interface, and the rest (health, metrics, docs). */
export type Surface = 'api' | 'admin' | 'other';

/**
 * Which part of the service `request` is for: the one place that classifies requests by path (the
 * rate limit, Cache-Control, Idempotency-Key and ETags all ask it). It reads the path the router
 * matches (Express's, a request target in absolute form included) and compares it as the router
 * does: case-sensitively (app.factory.ts), so a request this calls `other` reaches no endpoint of
 * the API or the admin interface.
 */
export function surfaceOf(request: Request): Surface {
  // baseUrl: the part a mounted middleware was matched by ('' for routes and app-wide middleware).
  return surfaceOfPath((request.baseUrl ?? '') + request.path);
}

/** surfaceOf for a path: `/api/v1/tasks` is the API's. */
export function surfaceOfPath(path: string): Surface {
  if (path === '/api/v1' || path.startsWith('/api/v1/')) return 'api';
  if (path === '/admin/v1' || path.startsWith('/admin/v1/')) return 'admin';
  return 'other';
}
