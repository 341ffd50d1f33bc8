import { METHODS } from 'node:http';

/** The paths of the catch-all route (common/http/routes.ts): every path, `/` included. */
export const CATCH_ALL_PATHS = ['/', '/*path'];

/**
 * Whether a route of the Express router is the catch-all: the one route that serves every method
 * Node knows (`@All`), where every other serves the ones it names. Its requests are those no
 * route serves: the log and the metrics call them `unmatched`, Allow never counts it.
 */
export function isCatchAllRoute(route: { methods?: Record<string, boolean> } | undefined): boolean {
  return route?.methods !== undefined && METHODS.every((method) => route.methods![method.toLowerCase()]);
}
