import { ValidateBy, ValidateIf, ValidationOptions } from 'class-validator';
import { isCalendarDate, isInstant } from '../dates';

/**
 * For @Transform on an integer query parameter: only digits are an integer here (Number()
 * would also read 1e1, 0x10, ' 5' and 10.0); anything else stays a string for IsInt to refuse.
 */
export const digitsToNumber = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);

/** Constraint name that the validation pipe answers with `read_only_field`. */
export const READ_ONLY_FIELD = 'readOnlyField';

/** Lengths count Unicode code points, so 200 emoji are 200 characters. */
export function codePointLength(value: string): number {
  let length = 0;
  for (const _ of value) length++;
  return length;
}

/**
 * What a text rule says of a value that is not a string: decorators run bottom-up, so a rule may
 * meet the value before IsString() above it does, and must not call 42 "empty".
 */
const NOT_A_STRING = 'must be a string';

/**
 * Text of `min` to `max` code points that PostgreSQL can store: a NUL character (U+0000) is
 * valid JSON but no PostgreSQL text may hold it.
 */
export function IsText(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isText',
      validator: {
        validate: (value) => typeof value === 'string' && !value.includes('\u0000') && codePointLength(value) >= min && codePointLength(value) <= max,
        defaultMessage: (args) =>
          typeof args?.value !== 'string'
            ? NOT_A_STRING
            : args.value.includes('\u0000')
              ? 'must not contain the NUL character (U+0000)'
              : min > 0
                ? `must be ${min} to ${max} characters`
                : `must be at most ${max} characters`,
      },
    },
    options,
  );
}

/** Not empty and not only white space. */
export function IsNotBlank(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isNotBlank',
      validator: {
        validate: (value) => typeof value === 'string' && value.trim() !== '',
        defaultMessage: (args) => (typeof args?.value === 'string' ? 'must not be empty or only white space' : NOT_A_STRING),
      },
    },
    options,
  );
}

/** A real calendar day written YYYY-MM-DD (2026-02-30 is not one). */
export function IsCalendarDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCalendarDate',
      validator: {
        validate: (value) => typeof value === 'string' && isCalendarDate(value),
        defaultMessage: () => 'must be a real calendar date written YYYY-MM-DD',
      },
    },
    options,
  );
}

/** An ISO 8601 instant with `Z` or an offset. */
export function IsInstant(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isInstant',
      validator: {
        validate: (value) => typeof value === 'string' && isInstant(value),
        defaultMessage: () => 'must be an ISO 8601 timestamp with Z or an offset, such as 2026-11-22T10:00:00.000Z',
      },
    },
    options,
  );
}

/**
 * The field may be left out, but not sent as null. (class-validator's IsOptional lets
 * null through, which is right only for fields that null clears.)
 */
export function OptionalButNotNull(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}

/**
 * `value` of this field is allowed only beside `sibling` (e.g. `sort=relevance` needs `search`):
 * without it, the field is invalid and the message names what it needs.
 */
export function OnlyWith(value: string, sibling: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'onlyWith',
      validator: {
        validate: (given, args) => given !== value || (args?.object as Record<string, unknown>)[sibling] !== undefined,
        defaultMessage: () => `${value} needs ${sibling}`,
      },
    },
    options,
  );
}

/** A field clients may read but never send: sending it is `read_only_field`; `message` may say what changes it instead. */
export function ReadOnlyField(message = 'is read-only'): PropertyDecorator {
  return ValidateBy({
    name: READ_ONLY_FIELD,
    validator: { validate: (value) => value === undefined, defaultMessage: () => message },
  });
}

/**
 * An array whose every element is one of `allowed`; the message names the first element that is
 * not, by its value and index, and the allowed ones (`what` names one: `a permission`).
 */
export function IsEachOneOf(allowed: readonly unknown[], what: string, options?: ValidationOptions): PropertyDecorator {
  const stranger = (value: unknown) => (Array.isArray(value) ? value.findIndex((item) => !allowed.includes(item)) : -1);
  return ValidateBy(
    {
      name: 'isEachOneOf',
      validator: {
        validate: (value) => Array.isArray(value) && stranger(value) === -1,
        defaultMessage: (args) => {
          if (!Array.isArray(args?.value)) return `must be an array whose every element is ${what}; allowed: ${allowed.join(', ')}`;
          const index = stranger(args?.value);
          const shown = index === -1 ? '' : JSON.stringify((args!.value as unknown[])[index])?.slice(0, 100);
          const bad = index === -1 ? 'has an element that' : `[${index}] is ${shown}, which`;
          return `${bad} is not ${what}; allowed: ${allowed.join(', ')}`;
        },
      },
    },
    options,
  );
}

/** A comma-separated list (`todo,done`) whose every element is one of `allowed`; empty elements are not. */
export function IsCommaSeparatedListOf(allowed: readonly string[], options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCommaSeparatedListOf',
      validator: {
        validate: (value) => typeof value === 'string' && value.split(',').every((item) => allowed.includes(item)),
        defaultMessage: () => `must be a comma-separated list of: ${allowed.join(', ')}`,
      },
    },
    options,
  );
}

// An http(s) URL as RFC 3986 writes it, with a host (a registered name or an IP literal): one
// pattern for JavaScript and for the database's CHECK (fields.ts, url()), both case-insensitive.
const URL_PCHAR = "[a-z0-9._~!$&'()*+,;=:@-]|%[0-9a-f]{2}";
export const HTTP_URL_PATTERN =
  '^https?://' +
  "(([a-z0-9._~!$&'()*+,;=:-]|%[0-9a-f]{2})*@)?" +
  "(([a-z0-9._~!$&'()*+,;=-]|%[0-9a-f]{2})+|\\[[0-9a-f:.]+\\])" +
  '(:[0-9]*)?' +
  `(/(${URL_PCHAR})*)*` +
  `([?](${URL_PCHAR}|[/?])*)?` +
  `(#(${URL_PCHAR}|[/?])*)?$`;
const HTTP_URL = new RegExp(HTTP_URL_PATTERN, 'i');

/**
 * An absolute http or https URL: RFC 3986's syntax with a host (HTTP_URL_PATTERN), that a WHATWG
 * URL parser (what browsers and fetch use) also reads as one (which refuses a port above 65535
 * or a malformed IP literal).
 */
export function IsHttpUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHttpUrl',
      validator: {
        validate: (value) => typeof value === 'string' && HTTP_URL.test(value) && URL.canParse(value),
        defaultMessage: () => 'must be an absolute http or https URL, such as https://example.com/page (RFC 3986: other characters percent-encoded)',
      },
    },
    options,
  );
}
