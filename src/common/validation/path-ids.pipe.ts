import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { isIdParameter, isUuid, NO_ID } from '../ids';

/**
 * The one place where ids in paths are read (registered globally, APP_PIPE): a route parameter
 * named `...Id` that is not a UUID (src/common/ids.ts) names nothing, so the route gets NO_ID, a
 * UUID that no record has, and answers it as it answers any unknown id: its own 404, after the
 * body and the query are validated like any request's (a bad body is 400 first, decisions.md
 * section 1). No route checks its path ids itself, and no other text reaches the database as a uuid.
 */
@Injectable()
export class PathIdPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'param' || metadata.data === undefined || !isIdParameter(metadata.data)) return value;
    return typeof value === 'string' && isUuid(value) ? value : NO_ID;
  }
}
