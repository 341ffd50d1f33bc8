import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { Request } from 'express';
import { Observable } from 'rxjs';
import { invalidFields } from '../errors/problem';

/**
 * Runs after the guards and before validation, for every route:
 * - answers the body problem that body parsing kept aside (malformed JSON, 413, 415, and
 *   what strict-json.ts refuses), then a query parameter that is not UTF-8 (query-text.ts);
 * - rejects a body or query parameters sent to a route that takes none, as
 *   `unknown_field` (routes that take them reject unknown ones through their DTO).
 */
@Injectable()
export class RequestShapeInterceptor implements NestInterceptor {
  private readonly declaredInputs = new WeakMap<object, { body: boolean; query: boolean }>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    if (request.bodyProblem) throw request.bodyProblem;
    if (request.queryProblem) throw request.queryProblem;
    const declared = this.inputsOf(context);
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

function rejectFields(fields: string[]): void {
  if (fields.length)
    throw invalidFields(
      'unknown_field',
      fields.map((field) => ({ field, message: 'is not a field of this request' })),
    );
}
