import { Injectable, PipeTransform } from '@nestjs/common';
import { badRequest } from '../errors/problem';

/** For PATCH bodies: after validation, a body without any field is 400 `empty_body`. */
@Injectable()
export class NonEmptyBodyPipe implements PipeTransform<object> {
  transform(value: object): object {
    if (!value || Object.keys(value).length === 0) throw badRequest('empty_body', 'The body must change at least one field');
    return value;
  }
}
