import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { OperationObject, ParameterObject, ResponseObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { PUBLIC_OPERATION, REQUIRED_PERMISSION_EXTENSION } from './auth/auth.decorators';
import { insufficientPermission, type Permission } from './auth/permissions';
import { rateLimited } from './auth/rate-limit.guard';
import { Problem, type FieldError, type ProblemCode } from './common/errors/problem';
import { internalProblem, problemJson } from './common/errors/problem-details.filter';
import { HONOURS_IF_MATCH } from './common/http/entity-tag';
import { isIdParameter } from './common/ids';
import { surfaceOfPath } from './common/http/surface';
import { referenceNotFound } from './tasks/task-references';
import { attachmentTooLarge, notMultipart } from './attachments/upload-reader';
import { describeWebhookDeliveries } from './webhooks/webhook-openapi';

/**
 * OpenAPI 3.1, not the 3.0 @nestjs/swagger writes by default. Measured with Ajv 8 (+ ajv-formats)
 * and openapi-typescript 7 (docs/decisions.md, "The OpenAPI document"): in 3.0 a nullable
 * reference (`nullable: true` beside `allOf: [{$ref}]`) does not let `null` validate in Ajv, and
 * the 3.0 spellings that Ajv accepts (`enum: [null]` branches) come out of the generator as
 * `T | (never | null)`. In 3.1, `oneOf: [{$ref}, {type: 'null'}]` and `type: ['string', 'null']`
 * are plain JSON Schema: Ajv validates `null` and nothing else, and the generator writes
 * `MemberDto | null`. The DTOs keep Nest's `nullable: true`; toJsonSchemaNulls() below rewrites it.
 */
const OPENAPI_VERSION = '3.1.0';

const TAGS: [name: string, description: string][] = [
  [
    'tasks',
    "The project's tasks: list (filters, cursor pagination), create, read, update, send to the trash; " +
      'dependencies between tasks, and the history of every change.',
  ],
  [
    'comments',
    'The conversation around a task: comments in Markdown with mentions of members, one level of replies, every edit kept as a revision. ' +
      'Writing needs comments:write; changing or deleting what another key wrote needs content:moderate.',
  ],
  [
    'attachments',
    'Files on a task, uploaded as multipart/form-data and typed by their bytes; downloaded by key or by a signed downloadUrl. ' +
      'Uploading needs attachments:write; deleting what another key uploaded needs content:moderate.',
  ],
  ['sprints', "The project's sprints: list, create, read, update, delete. Activation and closing belong to the app (admin)."],
  ['trash', 'Tasks sent to the trash, with their subtasks: list, restore, destroy for good.'],
  [
    'events',
    "The change feed: every change to the project's tasks and sprints as an event, numbered without gaps in commit order; " +
      'read with `after`, or hold the request open with `wait` until the next one commits.',
  ],
  [
    'webhooks',
    'Subscriptions that POST each event of the change feed to a URL, signed as Standard Webhooks; their delivery log and redelivery. ' +
      'Reading needs any key; changing them needs webhooks:manage.',
  ],
  ['members and labels', "The project's members and labels: the ids that a task's assigneeId and labelIds take."],
  ['health', 'Liveness and readiness probes for load balancers and orchestrators; no key.'],
  [
    'admin',
    "The product's app side under /admin/v1 (projects, members, labels, keys, sprint activation and closing), " +
      "authenticated with the deployment's ADMIN_TOKEN, never with a project key. Served only when ADMIN_TOKEN is set.",
  ],
];

/**
 * Swagger UI, made to read an operation at a glance (decisions.md, "The OpenAPI document"):
 * - every error is problem+json of one schema (ProblemDto, under Schemas) whose `code` the row's
 *   description names: an error row shows that one line, not its media type, example and headers
 *   again (the document keeps them all; an answer tried out shows in full, in its own table);
 * - every answer has one media type: no Accept to choose;
 * - an answer's example scrolls past 10 lines (a task list's fills 400 px otherwise);
 * - a parameter's type sits right under its name, its description scrolls past 4 lines (the
 *   filter language's reference fills 500 px otherwise), and its default and values sit close
 *   under it: the task list has 17 parameters, and its operation reads in under 2 500 px.
 */
const SWAGGER_UI_CSS = `
.swagger-ui .responses-table:not(.live-responses-table) tr.response[data-code^="4"] .response-col_description > :not(.response-col_description__inner),
.swagger-ui .responses-table:not(.live-responses-table) tr.response[data-code^="5"] .response-col_description > :not(.response-col_description__inner),
.swagger-ui .responses-table:not(.live-responses-table) .response-controls { display: none; }
.swagger-ui .responses-table:not(.live-responses-table) .highlight-code > .microlight { max-height: 10em; }
.swagger-ui .parameters-col_name .parameter__type { padding: 0; }
.swagger-ui .parameters-col_description > .renderedMarkdown:first-child { max-height: 5.4em; overflow-y: auto; }
.swagger-ui .parameters-col_description .parameter__default p, .swagger-ui .parameters-col_description .parameter__enum p { margin: 0; }
.swagger-ui .parameters-col_description input, .swagger-ui .parameters-col_description select { margin: 2px 0; }
`;

/** Swagger UI at /docs and the OpenAPI document at /docs/openapi.json. */
export function setupOpenApi(app: INestApplication): OpenAPIObject {
  const document = createOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    // The key pasted in Authorize survives a reload of the page (kept in the browser's local storage).
    swaggerOptions: { persistAuthorization: true },
    customCss: SWAGGER_UI_CSS,
  });
  return document;
}

/**
 * The document: what the controllers and DTOs declare, then the rules every operation shares,
 * added here once (security, the answers and headers of all routes, problem+json). Anything that
 * holds for every operation, or every operation of a kind, belongs in one of these steps.
 */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion(OPENAPI_VERSION)
    .setTitle('Task and sprint planning service')
    .setDescription(
      [
        "Manage a project's tasks and sprints. Every `/api/v1` request acts on the project of its key, sent as",
        '`Authorization: Bearer <key>`. Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`.',
        'Every `/api/v1` and `/admin/v1` answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, and every answer',
        '`X-Request-Id`. Ids are UUIDs; calendar dates are `YYYY-MM-DD` (Madrid civil days); timestamps are UTC with milliseconds.',
      ].join(' '),
    )
    .setVersion('1')
    .addServer('/', 'This deployment')
    // Two schemes, both `Authorization: Bearer`, told apart by what they carry and where they are
    // accepted. addSecurity, not addBearerAuth: that one adds `bearerFormat: JWT`, and neither is a JWT.
    .addSecurity('api-key', {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'tsk_ project key',
      description:
        "A project key: `tsk_` and 43 base64url characters, issued by the app (POST /admin/v1/projects/{projectId}/keys) or printed for the demo project. Every /api/v1 request acts on the key's project, with the key's permissions.",
    })
    .addSecurity('admin-token', {
      type: 'http',
      scheme: 'bearer',
      description:
        "The deployment's ADMIN_TOKEN (an environment variable, read at start), for /admin/v1 only: the product's app side. Project keys are refused there, and the admin token under /api/v1.",
    });
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const config = builder.build();
  // No licence object: the service is not licensed to anyone (package.json: UNLICENSED), and a
  // made-up SPDX reference made Swagger UI link to an SPDX page that does not exist (redocly.yaml).
  config.info.contact = { name: 'Task and sprint planning service team' };
  config.components = { ...config.components, headers: HEADERS };

  const document = SwaggerModule.createDocument(app, config, {
    // The controller method's name is the operationId, so a generated client reads
    // `listTasks`, `createTask`: name route methods accordingly (checked unique below).
    operationIdFactory: (_controller, method) => method,
  });
  for (const [path, method, operation] of operationsOf(document)) {
    checkOperationId(document, path, method, operation);
    summarize(path, method, operation);
    declareSecurity(path, method, operation);
    describeIdParameters(operation);
    addCommonAnswers(path, method, operation);
    describeSafeRetries(path, method, operation);
    describeConditionalRequests(path, method, operation);
    describeEmptyAnswers(operation);
    useProblemJsonForErrors(operation);
    exemplifyProblems(path, operation);
  }
  describeWebhookDeliveries(document);
  describeSharedAnswers(document, sharedResponses());
  dropUnusedSchemesAndTags(document);
  closeRequestBodies(document);
  toJsonSchemaNulls(document);
  return document;
}

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';
const METHODS: Method[] = ['get', 'post', 'patch', 'put', 'delete'];

function* operationsOf(document: OpenAPIObject): Generator<[string, Method, OperationObject]> {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) yield [path, method, operation];
    }
  }
}

function checkOperationId(document: OpenAPIObject, path: string, method: Method, operation: OperationObject): void {
  const id = operation.operationId ?? '';
  const same = [...operationsOf(document)].filter(([, , other]) => other.operationId === id);
  if (!/^[a-z][A-Za-z0-9]*$/.test(id) || same.length > 1) {
    throw new Error(
      `OpenAPI: ${method.toUpperCase()} ${path} has operationId "${id}": name its controller method uniquely, as a client method (listTasks)`,
    );
  }
}

/**
 * The controller method's doc comment is the operation's description (the Swagger CLI plugin
 * writes it as the summary); the summary is its first clause, on one line, for lists and sidebars.
 * An operation without a doc comment is an error here.
 */
function summarize(path: string, method: Method, operation: OperationObject): void {
  const text = (operation.description ?? operation.summary ?? '').replace(/\s+/g, ' ').trim();
  if (!text) throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} has no description: write a doc comment on its controller method`);
  operation.description = text;
  operation.summary = /^(.+?)[.;:](\s|$)/.exec(text)?.[1] ?? text;
}

/**
 * Every route needs a project key (ApiKeyGuard is global) unless it is public or admin; the
 * document says which, from the decorators the guards read. An operation that declares
 * neither is an error here rather than a document that silently says "no key".
 */
function declareSecurity(path: string, method: Method, operation: OperationObject): void {
  const extensions = operation as unknown as Record<string, unknown>;
  if (extensions[PUBLIC_OPERATION]) {
    delete extensions[PUBLIC_OPERATION];
    operation.security = [];
  } else if (!operation.security?.length) {
    throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} declares no security: use @ApiKeyAuthenticated, @AdminAuthenticated or @Public`);
  }
}

/** Ids in paths are UUIDs; any other value names nothing (404). */
function describeIdParameters(operation: OperationObject): void {
  for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
    if (parameter.in === 'path' && isIdParameter(parameter.name)) {
      parameter.schema = { type: 'string', format: 'uuid' };
      parameter.description ??= `The ${parameter.name.slice(0, -2).replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}'s id`;
    }
  }
}

/** Response headers, referenced from the answers that always carry them. */
const HEADERS = {
  'X-Request-Id': {
    description: "The request's id: the client's own X-Request-Id when it sent a sensible one, else one made for it. Logs name it.",
    required: true,
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description:
      'Requests allowed per minute (RATE_LIMIT_PER_MINUTE) per key; per client address for the admin interface and for requests without a live key',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
  'RateLimit-Remaining': { description: 'Requests left in the current window', required: true, schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', required: true, schema: { type: 'integer', minimum: 0 } },
  'Retry-After': { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': { description: 'Always `Bearer`', required: true, schema: { type: 'string', enum: ['Bearer'] } },
  'Retry-After-When-In-Progress': {
    description: 'On idempotency_in_progress: seconds to wait before retrying (1)',
    required: false,
    schema: { type: 'integer', minimum: 0 },
  },
  ETag: {
    description: 'Strong entity tag of the body (as its GET answers it): send it back as If-None-Match or If-Match',
    required: true,
    schema: { type: 'string', pattern: '^"[A-Za-z0-9_-]+"$' },
  },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key, replayed byte for byte',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
};

const problem = (description: string): ResponseObject => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ProblemDto' } } },
});

/**
 * Headers every answer of a part of the service carries, described once at the document's root
 * (`x-answer-headers`) instead of on every answer: Swagger UI showed their four rows under every
 * status of every operation. test/support/openapi-contract.ts checks every answer against them.
 */
const ANSWER_HEADERS = [
  { answers: 'every answer', pathPrefixes: ['/'], exceptStatuses: [], headers: ['X-Request-Id'] },
  {
    // A 500 may come from anywhere, the rate limiter included: its headers are not promised there.
    answers: 'every /api/v1 and /admin/v1 answer but a 500 (404 and 405 included)',
    pathPrefixes: ['/api/v1', '/admin/v1'],
    exceptStatuses: ['500'],
    headers: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  },
] as const;

/**
 * The answers many operations give alike, each described once under components/responses and
 * referenced: short (one line and its example), the same everywhere. An operation refers only to
 * those it can give (SHARED_RESPONSE_RULES below).
 */
function sharedResponses(): Record<string, ResponseObject> {
  const shared = (status: number, description: string, example: Problem, headers: (keyof typeof HEADERS)[] = []): ResponseObject => ({
    description,
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDto' }, example: problemJson(example) } },
    ...(headers.length ? { headers: Object.fromEntries(headers.map((name) => [name, { $ref: `#/components/headers/${name}` }])) } : {}),
  });
  return {
    UnknownParameter: shared(
      400,
      '`unknown_field`: an unknown query parameter, or a body sent to a route that takes none',
      problemFor(400, '', undefined)!,
    ),
    Unauthenticated: shared(
      401,
      '`unauthenticated`: no key, not a Bearer key, or an unknown or revoked key',
      problemFor(401, '/api/v1', undefined)!,
      ['WWW-Authenticate'],
    ),
    AdminUnauthenticated: shared(
      401,
      '`unauthenticated`: not the ADMIN_TOKEN (project keys are refused here)',
      problemFor(401, '/admin/v1', undefined)!,
      ['WWW-Authenticate'],
    ),
    PayloadTooLarge: shared(413, '`payload_too_large`: the body is larger than 1 MiB', problemFor(413, '', undefined)!),
    UnsupportedMediaType: shared(415, '`unsupported_media_type`: the body is not application/json', problemFor(415, '', undefined)!),
    IdempotencyKeyReused: shared(
      422,
      '`idempotency_key_reused`: this Idempotency-Key was used for another method, path or body',
      problemFor(422, '', undefined)!,
    ),
    RateLimited: shared(
      429,
      '`rate_limited`: over the rate limit of the key (or of the client address, without a live key); see Retry-After',
      problemFor(429, '/api/v1', undefined)!,
      ['Retry-After'],
    ),
    AdminRateLimited: shared(
      429,
      '`rate_limited`: over the rate limit of the client address; see Retry-After',
      problemFor(429, '/admin/v1', undefined)!,
      ['Retry-After'],
    ),
    Internal: shared(500, '`internal`: an unexpected error; the body says nothing of its cause, the log everything', problemFor(500, '', undefined)!),
    DatabaseUnavailable: shared(
      503,
      '`database_unavailable`: the database is unreachable; retry after Retry-After',
      problemFor(503, '/api/v1', undefined)!,
      ['Retry-After'],
    ),
    PreconditionFailed: shared(
      412,
      '`precondition_failed`: If-Match does not name the current version; ETag gives the current one',
      problemFor(412, '', undefined)!,
      ['ETag'],
    ),
    NotModified: {
      description: 'Not Modified: the copy named by If-None-Match is current; no body',
      headers: { ETag: { $ref: '#/components/headers/ETag' } },
    },
  };
}

const refTo = (name: string): ResponseObject => ({ $ref: `#/components/responses/${name}` }) as unknown as ResponseObject;

/**
 * The answers an operation can give whatever its own logic, each only where it can be given:
 * - 400 on every operation: an unknown query parameter, or a body to a route that takes none
 *   (RequestShapeInterceptor), or one that is not a JSON object;
 * - 413 and 415 only where the operation takes a body (a body sent to one that takes none is
 *   400, so a GET never answers them);
 * - 409 on every write: a concurrent change can conflict with it (database-errors.ts);
 * - 401 where a key or the admin token is needed; 429 under /api/v1 and /admin/v1;
 * - 500 everywhere; 503 database_unavailable (with Retry-After) wherever the database is read.
 * Operations describe their own 400, 403, 404 and 409 where they have more to say; the others
 * refer to components/responses.
 */
function addCommonAnswers(path: string, method: Method, operation: OperationObject): void {
  const responses = operation.responses as Record<string, ResponseObject>;
  const takesBody = operation.requestBody !== undefined;
  const retried = method !== 'get' && path.startsWith('/api/');
  // A write under /api/v1 adds the Idempotency-Key's own 400 to it (describeSafeRetries): its own then.
  if (!responses['400'] && (takesBody || retried)) {
    responses['400'] = problem(
      takesBody ? 'The body is not a JSON object (malformed_json), or has an unknown or invalid field' : 'An unknown query parameter (unknown_field)',
    );
  }
  responses['400'] ??= refTo('UnknownParameter');
  if (method !== 'get') {
    const concurrent = 'a concurrent change conflicted with this one; retry (conflict)';
    responses['409'] = responses['409']
      ? { ...responses['409'], description: `${responses['409'].description}; or ${concurrent}` }
      : problem(`The change conflicts: ${concurrent}`);
  }
  if (takesBody) {
    responses['413'] ??= refTo('PayloadTooLarge');
    responses['415'] ??= refTo('UnsupportedMediaType');
  }
  responses['500'] ??= refTo('Internal');
  // Everything but liveness reads the database: while it is unreachable, 503 with Retry-After.
  if (!['/', '/health', '/metrics'].includes(path)) responses['503'] ??= refTo('DatabaseUnavailable');

  const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (schemes.length) responses['401'] ??= refTo(schemes.includes('api-key') ? 'Unauthenticated' : 'AdminUnauthenticated');
  if (path.startsWith('/api/')) responses['429'] ??= refTo('RateLimited');
  if (path.startsWith('/admin/')) responses['429'] ??= refTo('AdminRateLimited');
  // Sorted by status, so the document (and the generated client) reads in a stable order.
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

function isRef(response: ResponseObject): boolean {
  return '$ref' in (response as object);
}

function addHeaders(response: ResponseObject, names: (keyof typeof HEADERS)[]): void {
  response.headers ??= {};
  for (const name of names) response.headers[name] ??= { $ref: `#/components/headers/${name}` };
}

/** Where a write under /api/v1 is safe to retry: every POST, PATCH and DELETE (decisions.md section 11). */
function describeSafeRetries(path: string, method: Method, operation: OperationObject): void {
  if (method === 'get' || !path.startsWith('/api/')) return;
  operation.parameters = [
    ...(operation.parameters ?? []),
    {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes the request safe to retry: sent again with the same key (and the same method, path and body) within 24 hours, ' +
        'it is not run again and answers the first answer, byte for byte, with Idempotent-Replayed: true. 1 to 255 printable ASCII characters.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    },
  ];
  const responses = operation.responses as Record<string, ResponseObject>;
  for (const [status, response] of Object.entries(responses)) if (status.startsWith('2')) addHeaders(response, ['Idempotent-Replayed']);
  responses['400'].description += '; or an Idempotency-Key that is not 1 to 255 printable ASCII characters (invalid_idempotency_key)';
  responses['409'].description += '; or a request with the same Idempotency-Key is still running (idempotency_in_progress): see Retry-After';
  responses['409'].headers = { ...responses['409'].headers, 'Retry-After': { $ref: '#/components/headers/Retry-After-When-In-Progress' } };
  responses['422'] = refTo('IdempotencyKeyReused');
}

/**
 * ETags (decisions.md section 12): every GET 200 under /api/v1 (but the event stream) carries
 * one and honours If-None-Match (304); the writes that take @IfMatch() (PATCH and DELETE of a task or a sprint,
 * a task's move) honour If-Match (412), and a PATCH answer carries the new ETag.
 */
function describeConditionalRequests(path: string, method: Method, operation: OperationObject): void {
  if (!path.startsWith('/api/')) return;
  const responses = operation.responses as Record<string, ResponseObject>;
  const header = (name: string, description: string): ParameterObject => ({
    name,
    in: 'header',
    required: false,
    description,
    schema: { type: 'string' },
  });
  // An event stream has no version to compare: it is never the same twice.
  if (method === 'get' && !responses['200']?.content?.['text/event-stream']) {
    operation.parameters = [
      ...(operation.parameters ?? []),
      header('If-None-Match', 'ETags of the copy you have (or *): 304 without a body while it is current'),
    ];
    addHeaders(responses['200'], ['ETag']);
    responses['304'] = refTo('NotModified');
  }
  if (method === 'patch' && responses['200']) addHeaders(responses['200'], ['ETag']);
  const extensions = operation as unknown as Record<string, unknown>;
  if (extensions[HONOURS_IF_MATCH]) {
    delete extensions[HONOURS_IF_MATCH];
    operation.parameters = [
      ...(operation.parameters ?? []),
      header('If-Match', 'Apply only if the resource is still the version this ETag names (or * for any): else 412 precondition_failed'),
    ];
    responses['412'] = refTo('PreconditionFailed');
  }
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/** Nest leaves a success answer's description empty; OpenAPI requires one. */
function describeEmptyAnswers(operation: OperationObject): void {
  for (const [status, response] of Object.entries(operation.responses as Record<string, ResponseObject>)) {
    if (!isRef(response) && !response.description) response.description = STATUS_CODES[Number(status)] ?? status;
  }
}

/** Error answers are application/problem+json, not application/json. */
function useProblemJsonForErrors(operation: OperationObject): void {
  for (const [status, response] of Object.entries(operation.responses as Record<string, ResponseObject>)) {
    const json = response.content?.['application/json'];
    if (Number(status) >= 400 && json) response.content = { 'application/problem+json': json };
  }
}

/**
 * What each error answer looks like, as the service words it (Swagger UI shows this example under
 * the status; the schema's own example would show one made-up problem for every status). One per
 * status, the problem the status most often is; test/openapi.e2e-spec.ts provokes each and
 * compares. An operation that documents its own example keeps it; the shared answers have theirs.
 */
function exemplifyProblems(path: string, operation: OperationObject): void {
  const extensions = operation as unknown as Record<string, unknown>;
  const permission = extensions[REQUIRED_PERMISSION_EXTENSION] as [Permission, ...Permission[]] | undefined;
  delete extensions[REQUIRED_PERMISSION_EXTENSION];
  for (const [status, response] of Object.entries(operation.responses as Record<string, ResponseObject>)) {
    const media = response.content?.['application/problem+json'];
    if (!media || media.example !== undefined || media.examples) continue;
    const problem = problemFor(Number(status), path, permission);
    if (problem) media.example = problemJson(problem);
  }
}

/**
 * The shared answers the operations refer to (the others go), the headers every answer carries
 * (written out in `x-answer-headers`: linters do not follow references in extensions), and only
 * the header components something refers to.
 */
function describeSharedAnswers(document: OpenAPIObject, shared: Record<string, ResponseObject>): void {
  const refsIn = (node: unknown, kind: string) =>
    new Set(
      JSON.stringify(node)
        .match(new RegExp(`#/components/${kind}/[\\w-]+`, 'g'))
        ?.map((ref) => ref.split('/').pop()!) ?? [],
    );
  const usedResponses = refsIn(document.paths, 'responses');
  const responses = Object.fromEntries(Object.entries(shared).filter(([name]) => usedResponses.has(name)));
  const usedHeaders = refsIn([document.paths, responses], 'headers');
  const headers = Object.fromEntries(Object.entries(document.components?.headers ?? {}).filter(([name]) => usedHeaders.has(name)));
  document.components = { ...document.components, responses, headers };
  (document as unknown as Record<string, unknown>)['x-answer-headers'] = ANSWER_HEADERS.map((rule) => ({
    ...rule,
    headers: Object.fromEntries(rule.headers.map((name) => [name, HEADERS[name]])),
  }));
}

/** A path parameter's resource, as its 404 names it. */
const NOT_FOUND_BY_PARAMETER: Record<string, string> = {
  taskId: 'Task',
  sprintId: 'Sprint',
  webhookId: 'Webhook',
  deliveryId: 'Delivery',
  blockedById: 'Dependency',
  labelId: 'Label',
  keyId: 'Key',
  projectId: 'Project',
  membershipId: 'Member',
  commentId: 'Comment',
  attachmentId: 'Attachment',
};

function problemFor(status: number, path: string, permission: [Permission, ...Permission[]] | undefined): Problem | null {
  const fieldProblem = (code: ProblemCode, errors: FieldError[]) =>
    new Problem(status, code, errors.map((error) => `${error.field} ${error.message}`).join('; '), errors);
  switch (status) {
    case 400:
      return fieldProblem('unknown_field', [{ field: 'colour', message: 'is not a field of this request' }]);
    case 401:
      return path.startsWith('/admin/')
        ? new Problem(status, 'unauthenticated', 'The admin interface needs Authorization: Bearer <ADMIN_TOKEN>')
        : new Problem(status, 'unauthenticated', 'Send your key as Authorization: Bearer <key>');
    case 403:
      if (!permission && path.startsWith('/api/v1/attachment-downloads/')) {
        return new Problem(status, 'forbidden', 'This download link is not valid: ask the API for a new one (the attachment’s downloadUrl)');
      }
      return permission ? insufficientPermission(permission) : null;
    case 404: {
      // The last path parameter names what was not found; a create names the reference it could not find.
      const parameter = [...path.matchAll(/\{(\w+)\}/g)].at(-1)?.[1];
      if (!parameter) {
        const field = path.endsWith('/bulk') ? 'tasks[0].sprintId' : path.endsWith('/move') ? null : 'sprintId';
        if (!field) return new Problem(status, 'not_found', 'Task not found');
        return referenceNotFound('sprintId', field, [randomUUID()]);
      }
      const what = path.startsWith('/api/v1/trash/') ? 'Task in the trash' : NOT_FOUND_BY_PARAMETER[parameter];
      return what ? new Problem(status, 'not_found', `${what} not found`) : null;
    }
    case 409:
      return new Problem(status, 'conflict', 'A concurrent change conflicted with this one; retry the request');
    case 410:
      return new Problem(
        status,
        'events_expired',
        'Events up to 1200 are no longer kept (EVENT_RETENTION_DAYS): resynchronise from the lists, then read from the current sequence',
      );
    case 412:
      return new Problem(
        status,
        'precondition_failed',
        'If-Match does not name the current version of this resource: read it again (its ETag is in this answer)',
      );
    case 413:
      // An upload has a limit of its own (decisions.md section 24), and it is multipart.
      if (path.endsWith('/attachments')) return attachmentTooLarge(26_214_400);
      return new Problem(status, 'payload_too_large', 'The body is larger than 1048576 bytes');
    case 415:
      if (path.endsWith('/attachments')) return notMultipart();
      return new Problem(status, 'unsupported_media_type', 'The body must be JSON sent as Content-Type: application/json');
    case 416:
      return new Problem(status, 'range_not_satisfiable', 'The range starts past the end of the file (1024 bytes)');
    case 422:
      return new Problem(
        status,
        'idempotency_key_reused',
        'This Idempotency-Key was used for another request (method, path or body differ): use a new key for a new request',
      );
    case 429:
      // The admin interface counts per client address; the API per key (keyless requests per address too).
      return rateLimited(surfaceOfPath(path) === 'admin' ? 'address' : 'key');
    case 500:
      return internalProblem();
    case 503:
      return path === '/ready'
        ? new Problem(status, 'service_unavailable', 'The database does not answer')
        : new Problem(status, 'database_unavailable', 'The database is unavailable at the moment; retry after the number of seconds in Retry-After');
    default:
      return null;
  }
}

/**
 * Without ADMIN_TOKEN the admin interface does not exist, nor do its operations in the document:
 * neither then does its bearer scheme (Swagger UI's Authorize would offer a token nothing takes)
 * nor its tag. Whatever no operation uses goes.
 */
function dropUnusedSchemesAndTags(document: OpenAPIObject): void {
  const operations = [...operationsOf(document)].map(([, , operation]) => operation);
  const schemes = new Set(operations.flatMap((operation) => (operation.security ?? []).flatMap((requirement) => Object.keys(requirement))));
  const tags = new Set(operations.flatMap((operation) => operation.tags ?? []));
  const securitySchemes = document.components?.securitySchemes ?? {};
  for (const name of Object.keys(securitySchemes)) if (!schemes.has(name)) delete securitySchemes[name];
  document.tags = (document.tags ?? []).filter((tag) => tags.has(tag.name));
}

/**
 * Request bodies are strict (an unknown field is 400 unknown_field), and a PATCH needs at least
 * one field (400 empty_body): the schemas say so. Answers stay open to new fields, so that
 * adding one is not a breaking change for clients.
 * A PATCH body has no `default`: its schema derives from the create body's (PartialType), whose
 * defaults (bodyField) say what creation fills in, but an absent field stays as it is on PATCH, and
 * a client or validator that fills defaults from the schema (Ajv's useDefaults, zod, pydantic)
 * would send them with every partial update and reset the resource. So the create bodies' doc
 * comments say only what holds for both.
 */
function closeRequestBodies(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Record<string, unknown>>;
  for (const [, method, operation] of operationsOf(document)) {
    const body = operation.requestBody as { content?: Record<string, { schema?: { $ref?: string } }> } | undefined;
    const ref = body?.content?.['application/json']?.schema?.$ref;
    const schema = ref ? schemas[ref.replace('#/components/schemas/', '')] : undefined;
    if (!schema) continue;
    schema.additionalProperties = false;
    if (method !== 'patch') continue;
    schema.minProperties = 1;
    for (const property of Object.values((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) delete property.default;
  }
}

/** OpenAPI 3.0's `nullable: true` (what Nest writes) as 3.1 JSON Schema. See OPENAPI_VERSION. */
function toJsonSchemaNulls(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(toJsonSchemaNulls);
  if (!node || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  for (const value of Object.values(schema)) toJsonSchemaNulls(value);
  if (!('nullable' in schema) || typeof schema.nullable !== 'boolean') return;
  const nullable = schema.nullable;
  delete schema.nullable;
  if (!nullable) return;
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    // Nest's spelling of a nullable reference: `{type: 'object', nullable: true, allOf: [{$ref}]}`.
    schema.oneOf = [schema.allOf[0], { type: 'null' }];
    delete schema.allOf;
    delete schema.type;
  } else if (Array.isArray(schema.oneOf)) {
    // New arrays: Nest shares them between properties (and `enum` with the constants they come from).
    schema.oneOf = [...schema.oneOf, { type: 'null' }];
  } else if (typeof schema.type === 'string') {
    schema.type = [schema.type, 'null'];
    if (Array.isArray(schema.enum)) schema.enum = [...schema.enum, null];
  } else {
    throw new Error(`OpenAPI: a nullable schema of a shape this converter does not know: ${JSON.stringify(schema)}`);
  }
}
