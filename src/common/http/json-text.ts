/**
 * A response body that is already JSON text (built by PostgreSQL), sent as it is. Routes
 * that return one declare `@Header('Content-Type', JSON_CONTENT_TYPE)` and their OpenAPI
 * type; `T` records the shape for readers of the code.
 */
export type JsonText<T> = string & { readonly shape?: T };

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
