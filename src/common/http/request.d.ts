import type { Caller } from '../../auth/caller';
import type { Problem } from '../errors/problem';

declare module 'express-serve-static-core' {
  interface Request {
    /** Request id, also sent as X-Request-Id; every log line of the request carries it. */
    id: string;
    /** performance.now() when the request arrived (request-id.ts): request durations in logs and metrics. */
    startedAt?: number;
    /** The project key that authenticated this request (src/auth). */
    caller?: Caller;
    /** A body problem found while parsing, answered after authentication (src/common/http/body-parsing.ts). */
    bodyProblem?: Problem;
    /** A query parameter that is not UTF-8, answered after authentication (src/common/http/query-text.ts). */
    queryProblem?: Problem;
  }
}
