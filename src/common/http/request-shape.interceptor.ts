import { CallHandler, ExecutionContext, HttpStatus, Injectable, NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { Request } from 'express';
import { Observable } from 'rxjs';
import { invalidFields, Problem } from '../errors/problem';

/**
 * Runs after the guards and before validation, for every route:
 * - on a route that takes a body, answers the body problem that body parsing kept aside
 *   (malformed JSON, 413, 415, and what strict-json.ts refuses); then a query parameter that is
 *   not UTF-8 (query-text.ts);
 * - rejects a body or query parameters sent to a route that takes none, as `unknown_field`
 *   (routes that take them reject unknown ones through their DTO): any body but an empty one or
 *   `{}`, whatever it is, so that such a route never answers 413 or 415 (its OpenAPI operation
 *   does not list them).
 */
@Injectable()
export class RequestShapeInterceptor implements NestInterceptor {
  private readonly declaredInputs = new WeakMap<object, { body: boolean; query: boolean }>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const declared = this.inputsOf(context);
    if (request.bodyProblem) throw declared.body ? request.bodyProblem : takesNoBody();
    if (request.queryProblem) throw request.queryProblem;
    if (!declared.query) rejectFields(Object.keys(request.query ?? {}));
    if (!declared.body && request.body && typeof request.body === 'object') rejectFields(Object.keys(request.body));
    return next.handle();
  }

  private inputsOf(context: ExecutionContext): { body: boolean; query: boolean } {
    const handler = context.getHandler();
    let inputs = this.declaredInputs.get(handler);
    if (!inputs) {
      const args: Record<string, unknown> = Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ?? {};
      const types = Object.keys(args).map((key) => Number(key.split(':')[0]));
      inputs = { body: types.includes(RouteParamtypes.BODY), query: types.includes(RouteParamtypes.QUERY) };
      this.declaredInputs.set(handler, inputs);
    }
    return inputs;
  }
}

/** A body that is not a JSON object with fields (not JSON, too large, not an object) sent to a route that takes none. */
function takesNoBody(): Problem {
  return new Problem(HttpStatus.BAD_REQUEST, 'unknown_field', 'This route takes no body: send none (an empty JSON object is accepted)');
}

function rejectFields(fields: string[]): void {
  if (fields.length)
    throw invalidFields(
      'unknown_field',
      fields.map((field) => ({ field, message: 'is not a field of this request' })),
    );
}
