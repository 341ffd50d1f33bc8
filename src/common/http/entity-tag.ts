import { createHash } from 'node:crypto';
import { createParamDecorator, ExecutionContext, HttpStatus } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Request } from 'express';
import { Problem } from '../errors/problem';

/**
 * Entity tags (decisions.md section 12): a strong ETag is a hash of the answer's body bytes,
 * so it changes exactly when the body would. A resource's ETag is that of its GET answer;
 * a PATCH answer is the same body as the GET that follows it, so it carries the same tag.
 */
export function entityTag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** The body bytes of an answer as the service sends it: JSON text as it is, anything else serialised. */
export function answerBody(answer: unknown): string {
  return typeof answer === 'string' ? answer : JSON.stringify(answer);
}

/**
 * `If-None-Match` against the current tag: true when the client's copy is current (304).
 * Weak comparison (RFC 9110 section 13.1.2): a W/ tag matches its strong twin; `*` matches
 * any existing resource.
 */
export function noneMatchIsCurrent(header: string | undefined, currentTag: string): boolean {
  if (header === undefined) return false;
  return header.trim() === '*' || listedTags(header).some((tag) => tag.replace(/^W\//, '') === currentTag);
}

/**
 * The `If-Match` precondition of a PATCH or DELETE, checked by the service after it has
 * locked the resource, against `currentAnswer` (what the resource's GET would answer now): 412 `precondition_failed`, with the current ETag, unless the header
 * is `*` or names the current tag (strong comparison: a weak tag never matches). No header:
 * no precondition.
 */
export async function assertIfMatch(header: string | undefined, currentAnswer: () => unknown): Promise<void> {
  if (header === undefined || header.trim() === '*') return;
  const currentTag = entityTag(answerBody(await currentAnswer()));
  if (listedTags(header).includes(currentTag)) return;
  throw new Problem(
    HttpStatus.PRECONDITION_FAILED,
    'precondition_failed',
    'If-Match does not name the current version of this resource: read it again (its ETag is in this answer)',
    undefined,
    {},
    { ETag: currentTag },
  );
}

/** Marks, in the OpenAPI document, an operation that honours If-Match: src/openapi.ts documents the header and the 412. */
export const HONOURS_IF_MATCH = 'x-honours-if-match';

/** The request's `If-Match` header, for services that honour it; the operation is documented as honouring it. */
export const IfMatch = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined => {
    const header = context.switchToHttp().getRequest<Request>().headers['if-match'];
    return typeof header === 'string' ? header : undefined;
  },
  [(target, key) => ApiExtension(HONOURS_IF_MATCH, true)(target, key!, Object.getOwnPropertyDescriptor(target, key!)!)],
);

function listedTags(header: string): string[] {
  return header.match(/(W\/)?"[^"]*"/g) ?? [];
}
