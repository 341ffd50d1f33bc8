import { ValidationError, ValidationPipe } from '@nestjs/common';
import { FieldError, invalidFields } from '../errors/problem';
import { didYouMean } from './field-hints';
import { READ_ONLY_FIELD } from './validators';

/**
 * The one validation set-up of the service, registered globally (APP_PIPE): bodies and
 * query strings become DTO instances or a 400. Fields the DTO does not define are
 * `unknown_field`, fields it marks read-only are `read_only_field`, anything else
 * is `validation_failed`, each listed in `errors`.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    // One message per field: the first rule it breaks.
    stopAtFirstError: true,
    transform: true,
    // The object each error is about (the DTO instance, or an item of it): an unknown field's hint
    // reads its class's fields. Never answered: the problem is built below.
    validationError: { target: true, value: false },
    exceptionFactory: (errors) => {
      const byKind = { unknown: [] as FieldError[], readOnly: [] as FieldError[], invalid: [] as FieldError[] };
      for (const { field, property, target, constraint, message } of firstInvalidItem([...flatten(errors)])) {
        if (constraint === 'whitelistValidation') {
          const hint = didYouMean(property, target);
          byKind.unknown.push({ field, message: `is not a field of this request${hint ? `; ${hint}` : ''}` });
        } else if (constraint === READ_ONLY_FIELD) byKind.readOnly.push({ field, message });
        else byKind.invalid.push({ field, message });
      }
      if (byKind.unknown.length) return invalidFields('unknown_field', byKind.unknown);
      if (byKind.readOnly.length) return invalidFields('read_only_field', byKind.readOnly);
      return invalidFields('validation_failed', byKind.invalid);
    },
  });
}

/**
 * In a body of items (`tasks[3].title`), the first item with a problem is the one answered
 * (decisions.md section 16: the first invalid item fails the request, errors naming it); the
 * problems of fields outside any item stay.
 */
function firstInvalidItem<T extends { field: string }>(problems: T[]): T[] {
  const indexOf = (field: string) => /^[^.[]+\[(\d+)\]/.exec(field)?.[1];
  const items = problems.map((problem) => indexOf(problem.field)).filter((index): index is string => index !== undefined);
  if (items.length === 0) return problems;
  const first = String(Math.min(...items.map(Number)));
  return problems.filter((problem) => [undefined, first].includes(indexOf(problem.field)));
}

interface FlatError {
  /** As the API names it: `tasks[3].title`. */
  field: string;
  /** Its own name: `title`. */
  property: string;
  /** The object it is a property of. */
  target: object | undefined;
  constraint: string;
  message: string;
}

function* flatten(errors: ValidationError[], parent = ''): Generator<FlatError> {
  for (const error of errors) {
    // An item of an array of objects is named by its index: tasks[3].title.
    const field = !parent ? error.property : /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`;
    // class-validator words its messages "<property> must ..."; the field is named apart.
    for (const [constraint, message] of Object.entries(error.constraints ?? {})) {
      yield {
        field,
        property: error.property,
        target: error.target,
        constraint,
        message: message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message,
      };
    }
    yield* flatten(error.children ?? [], field);
  }
}
