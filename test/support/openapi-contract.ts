import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Checks answers against the OpenAPI document the service serves at /docs/openapi.json:
 * - the method and path name an operation of the document, and the status is one it lists
 *   (an undocumented status fails);
 * - the Content-Type is one documented for that status, and a JSON body validates against its
 *   schema (Ajv 2020-12 with ajv-formats, as the document is OpenAPI 3.1); an answer documented
 *   without content has no body; an event stream is well formed and each message's data
 *   validates against the media type's `x-event-data` schema;
 * - every header the answer documents as required is there, and every documented header
 *   that is there matches its schema; and the headers the document's root promises on every
 *   answer of a part of the service (`x-answer-headers`: X-Request-Id, RateLimit-*) likewise. An
 *   answer documented by reference (components/responses) is checked as the one it names.
 * Stricter than the document on one point: an answer's object may not carry a property its
 * schema does not list (the published schemas stay open, so that adding a field is not a
 * breaking change for clients), so a field in the SQL JSON but not in the DTO fails a test,
 * like a field in the DTO but not in the SQL JSON (`required`).
 *
 * Answers for a method and path the document does not have (the /api/v1 catch-all, a disabled
 * admin interface, any unknown path) are not operations: they must be a 4xx problem+json that
 * validates against ProblemDto. The Swagger UI and the document itself (/docs...) are not checked;
 * a CORS preflight must be 204 with no body.
 */
/** The files the Swagger UI page loads, which @nestjs/swagger serves at the root. */
const SWAGGER_UI_ASSETS = /^\/(swagger-ui[\w.-]*\.(css|js)|favicon-\d+x\d+\.png)$/;

export class OpenApiContract {
  private static readonly byDocument = new Map<string, OpenApiContract>();
  private readonly ajv: Ajv2020;
  private readonly operations: { method: string; path: string; pattern: RegExp; operation: Operation }[];

  /** One contract (and one compilation of each schema) per document text. */
  static of(document: OpenApiDocument): OpenApiContract {
    const key = JSON.stringify(document);
    let contract = this.byDocument.get(key);
    if (!contract) this.byDocument.set(key, (contract = new OpenApiContract(JSON.parse(key))));
    return contract;
  }

  private constructor(private readonly document: OpenApiDocument) {
    if (!document.openapi.startsWith('3.1.')) throw new Error(`OpenApiContract reads OpenAPI 3.1 documents, not ${document.openapi}`);
    this.ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    // OpenAPI's own schema keywords, which JSON Schema validators must ignore.
    this.ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
    addFormats(this.ajv);
    const schemas = closeObjects((document.components?.schemas ?? {}) as object) as Record<string, object>;
    for (const [name, schema] of Object.entries(schemas)) this.ajv.addSchema(rebase(schema), `${SCHEMA_ID}${name}`);
    this.operations = Object.entries(document.paths)
      .flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
          .map(([method, operation]) => ({ method, path, pattern: pathPattern(path), operation: operation as Operation })),
      )
      // A literal segment wins over a parameter (`/tasks/bulk` before `/tasks/{taskId}`).
      .sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0));
  }

  check(answer: Answer): Verdict {
    // A request target in absolute form (`GET http://host/path`) is routed by its path.
    const path = answer.url
      .replace(/^[a-z][a-z\d+.-]*:\/\/[^/?]*/i, '')
      .split('?')[0]
      .replace(/(.)\/$/, '$1');
    if (path === '/docs' || path.startsWith('/docs/') || SWAGGER_UI_ASSETS.test(path)) return { kind: 'docs', errors: [] };
    // A CORS preflight's answer (the cors middleware's, under /api/v1) answers the browser, not an operation: 204, no body.
    if (answer.method === 'OPTIONS' && answer.headers['access-control-allow-methods'] !== undefined) {
      const errors =
        answer.status === 204 && answer.body.length === 0 ? [] : [`a preflight answered ${answer.status} with ${answer.body.length} bytes`];
      return { kind: 'preflight', errors };
    }
    // Express answers HEAD with the GET route.
    const method = answer.method === 'HEAD' ? 'get' : answer.method.toLowerCase();
    // A path the document has as it is (`/api/v1/tasks/bulk`) is that path's alone: ids are UUIDs,
    // so `GET /api/v1/tasks/bulk` is a method the path does not serve, not the task `bulk`.
    const literal = this.operations.some((candidate) => candidate.path === path);
    const found = this.operations.find(
      (candidate) => candidate.method === method && (literal ? candidate.path === path : candidate.pattern.test(path)),
    );
    const name = `${answer.method} ${answer.url} answered ${answer.status}`;
    const everyAnswer = this.checkAnswerHeaders(path, answer);
    if (!found) {
      return {
        kind: 'unknown route',
        errors: [...this.checkUnknownRoute(answer), ...everyAnswer].map((error) => `${name} (no such operation): ${error}`),
      };
    }
    const errors = [...this.checkOperation(found.operation, answer), ...everyAnswer].map(
      (error) => `${name} (${found.operation.operationId}): ${error}`,
    );
    return { kind: 'operation', operationId: found.operation.operationId, errors };
  }

  /** The headers `x-answer-headers` promises on every answer of the path's part of the service. */
  private checkAnswerHeaders(path: string, answer: Answer): string[] {
    const rules = (this.document as { 'x-answer-headers'?: AnswerHeaderRule[] })['x-answer-headers'] ?? [];
    const under = (prefix: string) => prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);
    const applying = rules.filter((rule) => rule.pathPrefixes.some(under) && !rule.exceptStatuses.includes(String(answer.status)));
    return applying.flatMap((rule) => this.checkHeaders({ headers: rule.headers }, answer).map((error) => `${error} (${rule.answers})`));
  }

  private checkOperation(operation: Operation, answer: Answer): string[] {
    const status = String(answer.status);
    const documented = operation.responses[status];
    const response = documented && this.resolve<ResponseObject>(documented);
    if (!response) return [`status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`];
    const errors = this.checkHeaders(response, answer);
    const mediaType = (answer.headers['content-type'] ?? '').toString().split(';')[0].trim();
    if (!response.content) {
      if (answer.body.length > 0 && answer.method !== 'HEAD') errors.push(`has a body (${mediaType}) where the document says none`);
      return errors;
    }
    // `*/*` documents an answer of any type (an attachment's bytes, with the type stored for them).
    if (!response.content[mediaType] && !(response.content['*/*'] && mediaType !== '')) {
      return [...errors, `Content-Type "${mediaType}" is not documented (documented: ${Object.keys(response.content).join(', ')})`];
    }
    if (!response.content[mediaType]) return errors;
    if (answer.method === 'HEAD') return errors;
    if (mediaType === 'text/event-stream') return [...errors, ...this.checkEventStream(response.content[mediaType], answer.body)];
    // A text answer (Prometheus metrics, say) is checked for its documented type only.
    if (!/^application\/([\w.-]+\+)?json$/.test(mediaType)) return errors;
    return [...errors, ...this.validateJson(response.content[mediaType].schema, answer.body)];
  }

  /**
   * Server-Sent Events (the HTML standard's text/event-stream): every line a comment or one of
   * the fields `id`, `event`, `data`, `retry` (digits), the stream cut at the end of a message,
   * and each message's data JSON that validates against the media type's `x-event-data` schema.
   */
  private checkEventStream(mediaType: { 'x-event-data'?: object }, body: Buffer): string[] {
    const text = body.toString('utf8');
    if (text.length > 0 && !/(\r\n|\r|\n)(\r\n|\r|\n)$/.test(text))
      return [`the event stream ends inside a message: ${JSON.stringify(text.slice(-200))}`];
    const errors: string[] = [];
    let data: string[] = [];
    for (const line of text.split(/\r\n|\r|\n/)) {
      if (line === '') {
        if (data.length && mediaType['x-event-data']) {
          errors.push(...this.validateJson(mediaType['x-event-data'], Buffer.from(data.join('\n'))).map((error) => `event data: ${error}`));
        }
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const match = /^(id|event|data|retry)(?:: ?(.*))?$/.exec(line);
      if (!match) errors.push(`the event stream has a line that is no field of an event: ${JSON.stringify(line.slice(0, 200))}`);
      else if (match[1] === 'retry' && !/^\d+$/.test(match[2] ?? '')) errors.push(`retry is not a number of milliseconds: ${JSON.stringify(line)}`);
      else if (match[1] === 'data') data.push(match[2] ?? '');
    }
    return errors;
  }

  private checkUnknownRoute(answer: Answer): string[] {
    if (answer.status < 400 || answer.status > 499) return [`an unknown route must answer a 4xx, not ${answer.status}`];
    const mediaType = (answer.headers['content-type'] ?? '').toString().split(';')[0].trim();
    if (mediaType !== 'application/problem+json') return [`an unknown route must answer application/problem+json, not "${mediaType}"`];
    // A HEAD answer has no body: its headers say what GET would answer.
    if (answer.method === 'HEAD') return [];
    return this.validateJson({ $ref: '#/components/schemas/ProblemDto' }, answer.body);
  }

  private checkHeaders(response: ResponseObject, answer: Answer): string[] {
    const errors: string[] = [];
    for (const [name, headerOrRef] of Object.entries(response.headers ?? {})) {
      const header = this.resolve<HeaderObject>(headerOrRef);
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) errors.push(`lacks the required header ${name}`);
        continue;
      }
      const validate = this.compile(header.schema);
      const text = String(value);
      const typed = ['integer', 'number'].includes(String(header.schema.type)) && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
      if (!validate(typed)) errors.push(`header ${name}: "${text}" ${this.ajv.errorsText(validate.errors, { dataVar: name })}`);
    }
    return errors;
  }

  private validateJson(schema: object, body: Buffer): string[] {
    let data: unknown;
    try {
      data = JSON.parse(body.toString('utf8'));
    } catch {
      return [`the body is not JSON: ${JSON.stringify(body.toString('utf8').slice(0, 200))}`];
    }
    const validate = this.compile(schema);
    if (validate(data)) return [];
    return (validate.errors ?? []).map((error) => `body${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`);
  }

  private readonly compiled = new Map<string, ValidateFunction>();

  /** Compiles each schema once (the same schema under several operations too); `$ref`s point into the document's components. */
  private compile(schema: object): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) this.compiled.set(key, (validate = this.ajv.compile(rebase(schema))));
    return validate;
  }

  private resolve<T>(value: T | { $ref: string }): T {
    const ref = (value as { $ref?: string }).$ref;
    if (!ref) return value as T;
    return ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key.replaceAll('~1', '/').replaceAll('~0', '~')], this.document) as T;
  }
}

export interface Answer {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
}

export interface Verdict {
  kind: 'operation' | 'unknown route' | 'docs' | 'preflight';
  operationId?: string;
  errors: string[];
}

/** The header a checked test request carries, so that its client finds the verdict on its answer. */
export const ANSWER_ID_HEADER = 'x-test-answer-id';

/**
 * Checks every answer `server` gives, whoever asked (supertest, fetch, a child process),
 * just before it is sent. A request that carried ANSWER_ID_HEADER gets its verdict back through
 * verdictFor(); failures of the others are kept for the end of the test file.
 */
export class AnswerChecker {
  readonly counts = { operation: 0, 'unknown route': 0, docs: 0, preflight: 0 };
  /** Failures no test request has claimed (raw requests): reported when the app closes. */
  readonly unclaimedFailures: string[] = [];
  private readonly verdicts = new Map<string, Verdict>();

  constructor(
    server: Server,
    private readonly contract: OpenApiContract,
  ) {
    // Prepended, so the response is wrapped before Express starts answering.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.watch(req, res));
  }

  verdictFor(answerId: string): Verdict | undefined {
    const verdict = this.verdicts.get(answerId);
    this.verdicts.delete(answerId);
    return verdict;
  }

  private watch(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown, encoding: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.from(chunk as Uint8Array),
      );
    };
    const write = res.write;
    const end = res.end;
    let ended = false;
    const finish = () => {
      ended = true;
      this.record(req, {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        status: res.statusCode,
        headers: res.getHeaders() as Answer['headers'],
        body: Buffer.concat(chunks),
      });
    };
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      // A streamed answer (an attachment's bytes) is whole once its Content-Length is written: the
      // client may have read it, and checked it, before the stream calls end().
      const length = res.getHeader('content-length');
      if (!ended && length !== undefined && chunks.reduce((sum, piece) => sum + piece.length, 0) >= Number(length)) finish();
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (!ended) {
        keep(chunk, rest[0]);
        finish();
      }
      return (end as (...args: unknown[]) => ServerResponse).call(res, chunk, ...rest);
    }) as ServerResponse['end'];
  }

  private record(req: IncomingMessage, answer: Answer): void {
    let verdict: Verdict;
    try {
      verdict = this.contract.check(answer);
    } catch (error) {
      verdict = { kind: 'operation', errors: [`${answer.method} ${answer.url}: the check failed: ${String(error)}`] };
    }
    this.counts[verdict.kind]++;
    const answerId = req.headers[ANSWER_ID_HEADER];
    if (typeof answerId === 'string') this.verdicts.set(answerId, verdict);
    else this.unclaimedFailures.push(...verdict.errors);
  }
}

// ---- The parts of an OpenAPI 3.1 document this reads ----

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
}

interface Operation {
  operationId: string;
  responses: Record<string, ResponseObject | { $ref: string }>;
}

/** A rule of the document's `x-answer-headers`: headers every answer under those paths carries, but at those statuses. */
interface AnswerHeaderRule {
  answers: string;
  pathPrefixes: string[];
  exceptStatuses: string[];
  headers: Record<string, HeaderObject | { $ref: string }>;
}

interface ResponseObject {
  headers?: Record<string, HeaderObject | { $ref: string }>;
  content?: Record<string, { schema: object; 'x-event-data'?: object }>;
}

interface HeaderObject {
  required?: boolean;
  schema: { type?: string };
}

/** `/api/v1/tasks/{taskId}` as a regular expression: a parameter is one path segment. */
function pathPattern(path: string): RegExp {
  const segments = path.split('/').map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}$`);
}

/** Each component schema is registered with Ajv under this prefix. */
const SCHEMA_ID = 'urn:openapi:schemas:';

/** Points the document's `#/components/schemas/...` references at the schemas registered with Ajv. */
function rebase(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${SCHEMA_ID}`));
}

/** Every object schema that lists its properties accepts no other (see OpenApiContract). */
function closeObjects(node: unknown): never {
  if (Array.isArray(node)) return node.map(closeObjects) as never;
  if (!node || typeof node !== 'object') return node as never;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) copy[key] = key === 'example' ? value : closeObjects(value);
  if (copy.properties && typeof copy.properties === 'object' && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy as never;
}

/**
 * A copy of `document` whose operations hold their answers in place of references to
 * components/responses: for tests that read an operation's answers as a client would see them.
 */
export function withAnswersResolved<D extends OpenApiDocument>(document: D): D {
  const copy = JSON.parse(JSON.stringify(document)) as D;
  const shared = ((document.components ?? {}) as { responses?: Record<string, object> }).responses ?? {};
  for (const item of Object.values(copy.paths)) {
    for (const operation of Object.values(item) as { responses?: Record<string, { $ref?: string }> }[]) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const name = response.$ref?.replace('#/components/responses/', '');
        if (name !== undefined) operation.responses![status] = JSON.parse(JSON.stringify(shared[name])) as { $ref?: string };
      }
    }
  }
  return copy;
}
