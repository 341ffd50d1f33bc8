import { HttpStatus } from '@nestjs/common';
import { createScanner, SyntaxKind } from 'jsonc-parser';
import { FieldError, invalidFields, Problem, ProblemCode } from '../errors/problem';

/** Bodies nested deeper than this are refused (decisions.md section 17). */
export const MAX_JSON_DEPTH = 64;

/**
 * Keys in one object, at most: no request defines a tenth of this, and a body of 100 000 keys
 * would cost its validation, the Idempotency-Key fingerprint (which sorts them) and its answer.
 */
export const MAX_KEYS_PER_OBJECT = 1000;

/**
 * Keys that mean something to JavaScript objects: refused anywhere in a body and as query
 * parameters (decisions.md section 17). Every name an object inherits, not only `__proto__`,
 * `constructor` and `prototype`: class-transformer skips a key whose name is an inherited method
 * (`toString`), so the whitelist would never see it and the field would vanish silently.
 */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** A lone UTF-16 surrogate: with the `u` flag, a paired one reads as one code point of another category. */
const LONE_SURROGATE = /\p{Cs}/u;

export const NOT_UNICODE_TEXT = 'must be valid Unicode text: UTF-8, without a lone UTF-16 surrogate';

/**
 * A request body's JSON text as the object it holds, refusing what JSON.parse accepts silently
 * (docs/decisions.md, "Bad input"), before any validation sees it:
 * - nesting deeper than MAX_JSON_DEPTH, or an object of more than MAX_KEYS_PER_OBJECT keys: 400
 *   malformed_json, found before anything recurses or is built;
 * - not JSON, or not an object: 400 malformed_json;
 * - a key twice in one object: 400 malformed_json naming it (which one was meant is unknowable);
 * - a key `__proto__`, `constructor`, `prototype` or any other name objects inherit: 400
 *   unknown_field naming it;
 * - a string (value or key) with a lone surrogate, or holding an offset of `notUtf8At` (where the
 *   body's bytes were not UTF-8, body-parsing.ts): 400 validation_failed naming it.
 * Throws the Problem. (Such an offset outside any string is not JSON: JSON.parse refuses the U+FFFD there.)
 *
 * One linear pass of jsonc-parser's scanner (a tokenizer, not recursive) over the text keeps a
 * stack of the open objects and arrays (at most MAX_JSON_DEPTH deep) to know each token's path;
 * JSON.parse then builds the value.
 */
export function parseJsonObject(text: string, notUtf8At: readonly number[] = []): Record<string, unknown> {
  const textProblem = firstTextProblem(text, notUtf8At);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformed('the body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw malformed('the body must be a JSON object');
  if (textProblem) throw textProblem;
  return value as Record<string, unknown>;
}

/** Where the scan is in an open object (`keys` seen, `at` the current key) or array (`at` the current index). */
interface Container {
  keys: Set<string> | null;
  at: string | number;
}

/**
 * The first problem of the text's keys and strings, in text order; throws at once when it nests too
 * deep. On text that is not JSON the answer does not matter: JSON.parse refuses that text next.
 */
function firstTextProblem(text: string, notUtf8At: readonly number[]): Problem | undefined {
  const scanner = createScanner(text, true);
  const open: Container[] = [];
  // The next offset of notUtf8At not before the token at hand: both advance in text order.
  let nextNotUtf8 = 0;
  let expectingKey = false;
  let problem: Problem | undefined;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    const container = open.at(-1);
    switch (token) {
      case SyntaxKind.OpenBraceToken:
      case SyntaxKind.OpenBracketToken:
        if (open.length === MAX_JSON_DEPTH) throw malformed(`the body is nested deeper than ${MAX_JSON_DEPTH} levels`);
        expectingKey = token === SyntaxKind.OpenBraceToken;
        open.push(expectingKey ? { keys: new Set(), at: '' } : { keys: null, at: 0 });
        break;
      case SyntaxKind.CloseBraceToken:
      case SyntaxKind.CloseBracketToken:
        open.pop();
        expectingKey = false;
        break;
      case SyntaxKind.CommaToken:
        if (container?.keys) expectingKey = true;
        else if (container) container.at = (container.at as number) + 1;
        break;
      case SyntaxKind.StringLiteral: {
        const value = scanner.getTokenValue();
        const start = scanner.getTokenOffset();
        while (nextNotUtf8 < notUtf8At.length && notUtf8At[nextNotUtf8] < start) nextNotUtf8++;
        const notUtf8 = nextNotUtf8 < notUtf8At.length && notUtf8At[nextNotUtf8] < start + scanner.getTokenLength();
        if (expectingKey && container?.keys) {
          if (container.keys.size === MAX_KEYS_PER_OBJECT) throw malformed(`the body has an object of more than ${MAX_KEYS_PER_OBJECT} keys`);
          expectingKey = false;
          container.at = value;
          problem ??= keyProblem(value, notUtf8, container.keys, open);
          container.keys.add(value);
        } else if (!problem && (notUtf8 || LONE_SURROGATE.test(value))) {
          problem = fieldProblem('validation_failed', open, NOT_UNICODE_TEXT);
        }
        break;
      }
    }
  }
  return problem;
}

function keyProblem(key: string, notUtf8: boolean, seen: Set<string>, open: Container[]): Problem | undefined {
  if (notUtf8 || LONE_SURROGATE.test(key)) return fieldProblem('validation_failed', open, NOT_UNICODE_TEXT);
  if (PROTOTYPE_KEYS.has(key)) return fieldProblem('unknown_field', open, 'is not a field of this request (a name reserved by JavaScript)');
  if (seen.has(key)) return fieldProblem('malformed_json', open, 'appears more than once in its object');
  return undefined;
}

/** The problem of the token the scan is at, named as the API names fields: `tasks[3].title`. */
function fieldProblem(code: ProblemCode, open: Container[], message: string): Problem {
  let field = '';
  for (const { keys, at } of open) field += keys ? (field ? `.${at}` : String(at)) : `[${at}]`;
  const error: FieldError = { field, message };
  return invalidFields(code, [error]);
}

function malformed(detail: string): Problem {
  return new Problem(HttpStatus.BAD_REQUEST, 'malformed_json', detail);
}
