import type { LoggerService } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Logger as NestPinoLogger, Params, PinoLogger } from 'nestjs-pino';
// Not in nestjs-pino's index: the request-scoped store its loggers read (the package is pinned to 4.6.x).
import { storage, Store } from 'nestjs-pino/storage';
import pino, { DestinationStream, Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { AppConfig } from '../config/app-config';
import { isCatchAllRoute } from '../common/http/catch-all';

/** The service's root logger: JSON lines (pino) on stdout, or coloured lines with LOG_FORMAT=pretty. */
export type RootLogger = Logger;

/**
 * Field names (in any case) whose values never reach a log line, at any of the first three
 * levels of a logged object: the Authorization header, keys, webhook secrets, the admin token.
 */
const SECRET_FIELDS = new Set(['authorization', 'cookie', 'secret', 'secrethash', 'password', 'token', 'admintoken', 'apikey', 'key']);
const CENSOR = '[redacted]';

/**
 * The logged object with its secret fields censored; the same object when it has none (the
 * request line never has). Not pino's `redact`: its wildcard paths cost about 35 us per line,
 * measured, which cut the requests a second by half; this walk costs about 1.
 */
function redactSecrets(value: Record<string, unknown>, depth = 0): Record<string, unknown> {
  let copy: Record<string, unknown> | null = null;
  for (const key of Object.keys(value)) {
    const field = value[key];
    let replacement = field;
    if (SECRET_FIELDS.has(key.toLowerCase())) replacement = CENSOR;
    else if (depth < 2 && isPlainObject(field)) replacement = redactSecrets(field, depth + 1);
    if (replacement !== field) {
      copy ??= { ...value };
      copy[key] = replacement;
    }
  }
  return copy ?? value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Secrets that can hide in free text (an error message quoting a header, say): project keys, webhook secrets, bearer tokens. */
const SECRET_IN_TEXT = /\b(tsk|whsec)_[A-Za-z0-9+/=_-]{8,}|(\bBearer\s+)\S+/gi;

export function scrubSecrets(text: string): string {
  return text.replace(SECRET_IN_TEXT, (_match, prefix: string | undefined, bearer: string | undefined) =>
    prefix ? `${prefix}_${CENSOR}` : `${bearer}${CENSOR}`,
  );
}

/** Health checks and scrapes run every few seconds: their request lines are debug, not info. */
const QUIET_PATHS = new Set(['/health', '/ready', '/metrics']);

export function createRootLogger(config: Pick<AppConfig, 'logLevel' | 'logFormat'>, destination?: DestinationStream): RootLogger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }), log: (object) => redactSecrets(object) },
    serializers: { err: (error: Error) => scrubError(pino.stdSerializers.err(error)) },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? scrubSecrets(arg) : arg)) as Parameters<pino.LogFn>);
      },
    },
  };
  if (destination) return pino(options, destination);
  if (config.logFormat === 'pretty') {
    return pino({
      ...options,
      // pino-pretty runs in a worker thread; it is a development dependency (loadConfig checks it is there).
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
    });
  }
  // Synchronous writes: nothing is lost when the process exits, and lines keep their order
  // with the demo key banner written straight to stdout.
  return pino(options, pino.destination({ dest: 1, sync: true }));
}

function scrubError(serialized: ReturnType<typeof pino.stdSerializers.err>): ReturnType<typeof pino.stdSerializers.err> {
  if (typeof serialized.message === 'string') serialized.message = scrubSecrets(serialized.message);
  if (typeof serialized.stack === 'string') serialized.stack = scrubSecrets(serialized.stack);
  return serialized;
}

/**
 * The route template of a request (`/api/v1/tasks/:taskId`), never its raw path: ids would make
 * every line and series unique. A path no route serves is `unmatched`, whether the catch-all
 * route (common/http/routes.ts, which serves every method) answered it or nothing did.
 */
export function routeTemplate(req: IncomingMessage): string {
  const { route, baseUrl } = req as Request & { route?: { path?: unknown; methods?: Record<string, boolean> } };
  return typeof route?.path === 'string' && !isCatchAllRoute(route) ? `${baseUrl ?? ''}${route.path}` : 'unmatched';
}

/** Milliseconds since the request arrived, to the tenth. */
export function durationMs(req: IncomingMessage): number {
  const startedAt = (req as Request).startedAt ?? performance.now();
  return Math.round((performance.now() - startedAt) * 10) / 10;
}

/**
 * One line per request when its answer is sent; never headers, bodies or query values, which
 * may hold secrets. Whatever is logged meanwhile carries the request id (nestjs-pino's store).
 */
export function httpLogger(root: RootLogger): RequestHandler {
  const line = (req: IncomingMessage, res: ServerResponse) => {
    const { caller, method, path } = req as Request;
    return {
      method,
      route: routeTemplate(req),
      path,
      status: res.statusCode,
      durationMs: durationMs(req),
      keyId: caller?.keyId,
      projectId: caller?.projectId,
    };
  };
  const message = (req: IncomingMessage, res: ServerResponse) => `${req.method} ${(req as Request).path} ${res.statusCode}`;
  const logRequest = pinoHttp({
    logger: root,
    serializers: {
      // pino-http puts its own serializers on its child logger: this one scrubs secrets as the root's does.
      err: scrubError,
      // pino-http binds the whole request to a child logger that is never written here
      // (quietReqLogger): serialized to nothing, its headers are not even stringified.
      req: () => undefined,
    },
    // The id is decided by the request-id middleware, which runs first; it names every line of the request.
    genReqId: (req) => (req as Request).id,
    customAttributeKeys: { reqId: 'requestId' },
    quietReqLogger: true,
    quietResLogger: true,
    customLogLevel: (req, res) => {
      if (QUIET_PATHS.has((req as Request).path)) return 'debug';
      if ((res as Response).err || (res.statusCode >= 500 && res.statusCode !== 503)) return 'error';
      return res.statusCode >= 500 ? 'warn' : 'info';
    },
    customSuccessObject: (req, res) => line(req, res),
    customSuccessMessage: message,
    customErrorObject: (req, res) => {
      const { err, locals } = res as Response;
      return { ...line(req, res), ...(err ? { err } : {}), ...(locals?.databaseError ? { cause: locals.databaseError } : {}) };
    },
    customErrorMessage: (req, res) => message(req, res),
  });
  return (req: Request, res: Response, next: NextFunction) => logRequest(req, res, () => storage.run(new Store(req.log), next));
}

// Nest's start-up chatter (a line per module and per route) is debug, not info.
const QUIET_NEST_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/** Nest's own logger (and every `new Logger(context)` of the code) written through pino, with the request id inside a request. */
export class NestLogger extends NestPinoLogger implements LoggerService {
  constructor(root: RootLogger) {
    const params: Params = { pinoHttp: { logger: root } };
    super(new PinoLogger(params), params);
  }

  override log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams[optionalParams.length - 1];
    if (typeof context === 'string' && QUIET_NEST_CONTEXTS.has(context)) return super.debug(message, ...optionalParams);
    super.log(message, ...optionalParams);
  }
}
