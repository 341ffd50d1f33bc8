import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import type { Request, Response } from 'express';
import { DATABASE_RETRY_AFTER_SECONDS, problemFromDatabaseError, violatedConstraint } from './database-errors';
import { Problem, ProblemCode } from './problem';

/**
 * The one place where failures become answers (problem+json with a stable `code`). An unexpected
 * error tells the client nothing of its cause; its stack goes on the request's log line, and a
 * constraint the validation let through gets a line of its own: it is a defect.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Database');

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const request = context.getRequest<Request>();
    const response = context.getResponse<Response>();
    const problem = this.toProblem(exception, request);
    if (problem.code === 'internal') {
      response.err = exception instanceof Error ? exception : new Error(String(exception));
      const violation = violatedConstraint(exception);
      if (violation) {
        this.logger.error(
          `Defect: the database constraint ${violation.constraint ?? '(unnamed)'} (SQLSTATE ${violation.sqlState}) refused a change that validation let through; ` +
            'the API must refuse what the database refuses (docs/extending.md). Answered 500.',
        );
      }
    }
    // Not a bug, but what failed belongs in the log line (without a stack).
    if (problem.code === 'database_unavailable') response.locals.databaseError = exception instanceof Error ? exception.message : String(exception);
    if (response.headersSent) {
      response.end();
      return;
    }
    // Headers of an answer that was being made when the failure came (a write whose commit
    // failed had set its ETag and Location) describe nothing that exists.
    for (const name of ['ETag', 'Location', 'Idempotent-Replayed']) response.removeHeader(name);
    if (problem.code === 'unauthenticated') response.setHeader('WWW-Authenticate', 'Bearer');
    for (const [name, value] of Object.entries(problem.headers)) response.setHeader(name, value);
    if (problem.code === 'database_unavailable') response.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
    response
      .status(problem.getStatus())
      .type('application/problem+json')
      .send(JSON.stringify(problemJson(problem)));
  }

  private toProblem(exception: unknown, request: Request): Problem {
    if (exception instanceof Problem) return exception;
    const databaseProblem = problemFromDatabaseError(exception);
    if (databaseProblem) return databaseProblem;
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      const status = exception.getStatus();
      return new Problem(status, CODE_BY_STATUS[status] ?? 'validation_failed', httpExceptionDetail(exception, request));
    }
    return internalProblem();
  }
}

/** The answer of an unexpected error: nothing about its cause (the log line has it). */
export function internalProblem(): Problem {
  return new Problem(HttpStatus.INTERNAL_SERVER_ERROR, 'internal', 'An unexpected error occurred; it has been logged');
}

/** The problem+json body of `problem`: what the filter answers, and the OpenAPI document's examples (src/openapi.ts). */
export function problemJson(problem: Problem): Record<string, unknown> {
  return {
    type: 'about:blank',
    title: STATUS_CODES[problem.getStatus()] ?? 'Error',
    status: problem.getStatus(),
    detail: problem.detail,
    code: problem.code,
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...problem.extensions,
  };
}

const CODE_BY_STATUS: Record<number, ProblemCode> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'insufficient_permission',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

function httpExceptionDetail(exception: HttpException, request: Request): string {
  switch (exception.getStatus()) {
    case 404:
      return `No route ${request.method} ${request.path}`;
    default:
      return exception.message;
  }
}
