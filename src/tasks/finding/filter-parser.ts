import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generate, type Parser, type parser } from 'peggy';
import { Problem } from '../../common/errors/problem';
import { HttpStatus } from '@nestjs/common';

/** A value as written (quotes and escapes taken off), and the offset of its first character. */
export interface FilterValue {
  text: string;
  at: number;
}

export const FILTER_OPERATORS = ['=', '!=', '<', '<=', '>', '>=', '~', 'in', 'not in', 'is empty', 'is not empty'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** The tree the grammar (filter.peggy) builds; `at` is the 0-based offset each node starts at. */
export type FilterNode =
  { kind: 'and' | 'or'; at: number; items: FilterNode[] } | { kind: 'not' | 'group'; at: number; item: FilterNode } | FilterCondition;

export interface FilterCondition {
  kind: 'condition';
  at: number;
  field: { name: string; at: number };
  operator: FilterOperator;
  operatorAt: number;
  values: FilterValue[];
}

/** Deeper than this many parentheses, or more conditions than this: 400 (decisions.md section 25). */
export const MAX_FILTER_DEPTH = 16;
export const MAX_FILTER_CONDITIONS = 100;

// Built from the grammar once, when this module is loaded: nothing generated is kept in the
// repository, and `nest build` copies the grammar beside this file (nest-cli.json assets).
const PARSER: Parser = generate(readFileSync(path.join(__dirname, 'filter.peggy'), 'utf8'));

/** 400 invalid_filter: `detail` says what was expected, `position` where (a 0-based offset). */
export function invalidFilter(position: number, what: string): Problem {
  const detail = `${what} at position ${position}`;
  return new Problem(HttpStatus.BAD_REQUEST, 'invalid_filter', detail, [{ field: 'filter', message: detail }], { position });
}

/**
 * The tree of a filter expression whose field names are among `fields`, or 400 invalid_filter at
 * the first character that does not fit. The depth is checked before parsing too, so that no
 * nesting can exhaust the parser's stack. Every position, in the tree and in an error, counts
 * characters (code points), as the filter's length does: an emoji before it counts one.
 */
export function parseFilter(text: string, fields: readonly string[]): FilterNode {
  const characters = characterOffsets(text);
  checkParentheses(text, characters);
  let tree: FilterNode;
  try {
    tree = PARSER.parse(text, { fields }) as FilterNode;
  } catch (error) {
    if (!isSyntaxError(error)) throw error;
    const offset = error.location.start.offset;
    throw invalidFilter(characters(offset), `expected ${expectations(error.expected ?? [])}${after(text, offset)}`);
  }
  inCharacters(tree, characters);
  checkLimits(tree);
  return tree;
}

/** The character (code point) offset of each UTF-16 offset of `text`: peggy counts UTF-16 units. */
function characterOffsets(text: string): (offset: number) => number {
  if (!/[\uD800-\uDFFF]/.test(text)) return (offset) => offset;
  return (offset) => [...text.slice(0, offset)].length;
}

/** Rewrites the tree's offsets (UTF-16 units, as peggy gives them) as character offsets. */
function inCharacters(node: FilterNode, characters: (offset: number) => number): void {
  node.at = characters(node.at);
  switch (node.kind) {
    case 'condition':
      node.field.at = characters(node.field.at);
      node.operatorAt = characters(node.operatorAt);
      for (const value of node.values) value.at = characters(value.at);
      return;
    case 'not':
    case 'group':
      return inCharacters(node.item, characters);
    default:
      return node.items.forEach((item) => inCharacters(item, characters));
  }
}

/**
 * Refuses a 17th level of parentheses before the parser recurses into it. Only the innermost
 * parentheses can be an `in` list, so a 17th level below 17 others is certainly a group: the
 * same position the tree's check (checkLimits) gives.
 */
function checkParentheses(text: string, characters: (offset: number) => number): void {
  const open: number[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const character = text[i];
    if (quoted) {
      if (character === '\\') i++;
      else if (character === '"') quoted = false;
    } else if (character === '"') quoted = true;
    else if (character === '(') {
      open.push(i);
      if (open.length > MAX_FILTER_DEPTH + 1) throw tooDeep(characters(open[MAX_FILTER_DEPTH]));
    } else if (character === ')') open.pop();
  }
}

function checkLimits(tree: FilterNode): void {
  let conditions = 0;
  const visit = (node: FilterNode, depth: number): void => {
    switch (node.kind) {
      case 'condition':
        if (++conditions > MAX_FILTER_CONDITIONS) {
          throw invalidFilter(node.at, `more than ${MAX_FILTER_CONDITIONS} conditions: condition ${conditions} starts`);
        }
        return;
      case 'group':
        if (depth + 1 > MAX_FILTER_DEPTH) throw tooDeep(node.at);
        return visit(node.item, depth + 1);
      case 'not':
        return visit(node.item, depth);
      default:
        return node.items.forEach((item) => visit(item, depth));
    }
  };
  visit(tree, 0);
}

function tooDeep(position: number): Problem {
  return invalidFilter(position, `deeper than ${MAX_FILTER_DEPTH} parentheses: parenthesis ${MAX_FILTER_DEPTH + 1} opens`);
}

function isSyntaxError(error: unknown): error is parser.SyntaxError {
  return error instanceof PARSER.SyntaxError;
}

/** `a value`, `"and", "or" or the end`: what the grammar would have taken there, each once. */
function expectations(expected: parser.Expectation[]): string {
  const described = [
    ...new Set(
      expected.map((expectation) => {
        switch (expectation.type) {
          case 'literal':
            return JSON.stringify(expectation.text.toLowerCase());
          case 'end':
            return 'the end of the filter';
          case 'other':
            return expectation.description;
          default:
            return 'a character';
        }
      }),
    ),
  ].sort();
  if (described.length <= 1) return described[0] ?? 'something else';
  return `${described.slice(0, -1).join(', ')} or ${described[described.length - 1]}`;
}

/** ` after "="`: the last token before `position`, to say where in the expression the error is. */
function after(text: string, position: number): string {
  const token = /("(?:[^"\\]|\\.)*"|[!<>]=|[()=,~<>]|[^\s()",=!<>~]+)\s*$/.exec(text.slice(0, position));
  return token ? ` after ${JSON.stringify(token[1].length > 40 ? `${token[1].slice(0, 40)}...` : token[1])}` : '';
}
