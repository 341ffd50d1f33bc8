import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { answerBody, entityTag, noneMatchIsCurrent } from './entity-tag';
import { JSON_CONTENT_TYPE } from './json-text';
import { surfaceOf } from './surface';

/**
 * ETag and If-None-Match (decisions.md section 12), for every 200 answer of a GET (and HEAD)
 * under /api/v1, the lists included, and for PATCH answers (the same body as the GET that
 * follows). The body is serialised here, once: the tag is the hash of the very bytes sent.
 * A GET whose If-None-Match names the current tag is answered 304 with no body; for a list
 * that nothing changed, that costs the version read of its remembered page (TaskReader).
 */
@Injectable()
export class EntityTagInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const read = request.method === 'GET' || request.method === 'HEAD';
    if ((!read && request.method !== 'PATCH') || surfaceOf(request) !== 'api') return next.handle();
    const response = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        if (response.statusCode !== 200 || result === undefined) return result;
        const body = answerBody(result);
        const tag = entityTag(body);
        response.setHeader('ETag', tag);
        response.setHeader('Content-Type', JSON_CONTENT_TYPE);
        if (read && noneMatchIsCurrent(request.headers['if-none-match'], tag)) {
          response.status(304);
          return undefined;
        }
        return body;
      }),
    );
  }
}
