/**
 * A typed client of the service: openapi-fetch over the types that openapi-typescript generates
 * from the served OpenAPI document (schema.d.ts, written by `npm run client:generate`).
 *
 *   const api = createClient({ baseUrl: 'http://localhost:3000', apiKey: 'tsk_...' });
 *   const { data, error } = await api.GET('/api/v1/tasks/{taskId}', { params: { path: { taskId } } });
 *
 * Paths, parameters, bodies and answers are checked by the compiler; `error` is the problem+json body.
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema';

export type * from './schema';

export interface ClientOptions {
  /** Where the service runs, such as `http://localhost:3000` (no trailing /api/v1). */
  baseUrl: string;
  /** A project key (`tsk_...`), or the ADMIN_TOKEN for the /admin/v1 operations. */
  apiKey: string;
  /** Another fetch implementation (tests, proxies); the global fetch by default. */
  fetch?: typeof globalThis.fetch;
}

export type TasksApi = Client<paths>;

export function createClient({ baseUrl, apiKey, fetch }: ClientOptions): TasksApi {
  return createFetchClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` }, ...(fetch && { fetch }) });
}
