import { CallHandler, ExecutionContext, HttpStatus, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { Problem } from '../common/errors/problem';
import { surfaceOf } from '../common/http/surface';
import { IdempotencyService } from './idempotency.service';

const WRITE_METHODS = new Set(['POST', 'PATCH', 'DELETE']);

/** 1 to 255 printable ASCII characters (decisions.md section 11). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const AFTER_BODY = 'idempotency:afterBody';

/**
 * On a route whose body is a stream (an upload, decisions.md section 24): the interceptor checks
 * the key's format only, and the route runs IdempotencyService itself once it has read the body
 * and knows its fingerprint, so that no transaction stays open while a body arrives.
 */
export const IdempotencyAfterBody = () => SetMetadata(AFTER_BODY, true);

/**
 * Honours `Idempotency-Key` on every POST, PATCH and DELETE under /api/v1. It runs after the
 * guards (rate limit, 401, 403) and before the other interceptors and the validation pipe, so
 * the order is the one of decisions.md section 11: key format (400), then replay or 422/409,
 * then body validation and the rest. Without the header nothing changes.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly idempotency: IdempotencyService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const idempotencyKey = idempotencyKeyOf(request);
    if (idempotencyKey === undefined || Reflect.getMetadata(AFTER_BODY, context.getHandler())) return next.handle();
    const response = context.switchToHttp().getResponse<Response>();
    return from(this.idempotency.run(request.caller!.keyId, idempotencyKey, fingerprint(request), response, () => lastValueFrom(next.handle())));
  }
}

/** The request's Idempotency-Key when it is a write under /api/v1 that sends one; 400 when it is not 1 to 255 printable ASCII characters. */
export function idempotencyKeyOf(request: Request): string | undefined {
  const idempotencyKey = request.headers['idempotency-key'];
  if (idempotencyKey === undefined || !WRITE_METHODS.has(request.method) || surfaceOf(request) !== 'api') return undefined;
  if (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw new Problem(HttpStatus.BAD_REQUEST, 'invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters', [
      { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
  }
  return idempotencyKey;
}

/** Method, path with query, and the body as a JSON value: the order of object keys does not matter. */
function fingerprint(request: Request): string {
  // A body that could not be read is answered 400 later; it never matches a stored answer.
  const body = request.bodyProblem ? { unreadable: request.bodyProblem.code } : canonical(request.body ?? null);
  return createHash('sha256')
    .update(JSON.stringify([request.method, request.originalUrl, body]))
    .digest('hex');
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}
