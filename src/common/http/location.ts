import { applyDecorators, CallHandler, ExecutionContext, NestInterceptor, Type, UseInterceptors } from '@nestjs/common';
import { ApiCreatedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { map, Observable } from 'rxjs';

/** Sets `Location` on the answer from the answer's body: the address of what the request created. */
class LocationInterceptor<T> implements NestInterceptor<T, T> {
  constructor(private readonly locationOf: (answer: T) => string) {}

  intercept(context: ExecutionContext, next: CallHandler<T>): Observable<T> {
    return next.handle().pipe(
      map((answer) => {
        context.switchToHttp().getResponse<Response>().location(this.locationOf(answer));
        return answer;
      }),
    );
  }
}

/**
 * On a create (201): its answer is `type`, and `Location` is the new resource's address, which
 * `locationOf` reads from the answer; the OpenAPI document says both. Every create of one
 * resource uses it (a task, a sprint, a webhook, and the admin interface's project, member,
 * label and key), so they all answer alike. The header is set before the global interceptors
 * see the answer: an Idempotency-Key's stored answer keeps it.
 */
export function CreatedAt<T>(type: Type<T>, template: string, locationOf: (answer: T) => string): MethodDecorator {
  return applyDecorators(
    UseInterceptors(new LocationInterceptor(locationOf)),
    ApiCreatedResponse({
      type,
      headers: { Location: { description: `The new resource: ${template}`, required: true, schema: { type: 'string' } } },
    }),
  );
}
