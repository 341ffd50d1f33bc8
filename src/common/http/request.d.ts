import type { Caller } from '../../auth/caller';
import type { Problem } from '../errors/problem';

declare module 'express-serve-static-core' {
  interface Request {
    /** Request id, also sent as X-Request-Id; errors are logged with it. */
    id?: string;
    /** The project key that authenticated this request (src/auth). */
    caller?: Caller;
    /** A body problem found while parsing, answered after authentication (src/common/http/body-parsing.ts). */
    bodyProblem?: Problem;
  }
}
