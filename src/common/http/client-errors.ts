import { maxHeaderSize } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Problem, type ProblemCode } from '../errors/problem';
import { problemJson } from '../errors/problem-details.filter';
import { methodNotAllowed, noEndpoint, type RouteTable } from './routes';

interface ClientErrorAnswer {
  status: number;
  code: ProblemCode;
  detail: string;
}

/** Node's parser errors that have an answer of their own; any other is 400, as Node answers them. */
const ANSWERS: Record<string, ClientErrorAnswer> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'request_header_too_large',
    detail: `The request's headers are larger than the ${maxHeaderSize} bytes this server reads`,
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, code: 'payload_too_large', detail: "The body's chunk extensions are too large" },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', detail: 'The request was not received in time' },
};
const NOT_HTTP: ClientErrorAnswer = { status: 400, code: 'malformed_request', detail: 'The request is not valid HTTP/1.1' };
const CONNECT: ClientErrorAnswer = {
  status: 405,
  code: 'method_not_allowed',
  detail: 'CONNECT is not served: this server is no proxy',
};
const EXPECTATION_FAILED: ClientErrorAnswer = {
  status: 417,
  code: 'expectation_failed',
  detail: 'The only Expect this server meets is 100-continue',
};

/** A request line whose method is a token Node's parser does not know (`FOO /api/v1/tasks HTTP/1.1`). */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\/[^ ?#]*)(?:\?[^ ]*)? HTTP\/1\.[01]\r?\n/;

/**
 * A method Node's parser refuses (it knows only the registered methods): answered as the routes
 * answer a known one (decisions.md section 26), 405 with Allow on a path some route serves, 404 on
 * any other; null when the error is another one.
 */
function unknownMethod(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, routes: Pick<RouteTable, 'allowed'>): Problem | null {
  if (error.code !== 'HPE_INVALID_METHOD' || !error.rawPacket) return null;
  const line = REQUEST_LINE.exec(error.rawPacket.subarray(0, 8192).toString('latin1'));
  if (!line) return null;
  const [, method, path] = line;
  const { methods, template } = routes.allowed(path);
  return template === null ? noEndpoint(path) : methodNotAllowed(method, template, methods);
}

/** What Node calls the response in progress on a connection; it has no public name. */
type ServerSocket = Duplex & { _httpMessage?: { headersSent: boolean } | null };

/**
 * Requests that Node's HTTP parser refuses before any route sees them (headers over its limit,
 * text that is not HTTP, too slow) are answered as problem+json like every other error
 * (decisions.md sections 1 and 22), where Node would send a bare status line. Node's own rule
 * is kept: an answer only where none has started on the connection, which is then closed.
 * So is a request whose `Expect` is not `100-continue` (Node answers a bare 417 before any route),
 * a CONNECT (405: no route serves it, and Node would close the connection without an answer), and
 * a method Node does not know (405 with Allow, or 404, as the routes answer a known one).
 */
export function answerClientErrorsAsProblems(server: Server, routes: Pick<RouteTable, 'allowed'>): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ServerSocket) => {
    if (error.code !== 'ECONNRESET' && socket.writable && !socket._httpMessage?.headersSent) {
      const { status, title, headers, body } = problemAnswer(unknownMethod(error, routes) ?? ANSWERS[error.code ?? ''] ?? NOT_HTTP);
      const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
      socket.write([`HTTP/1.1 ${status} ${title}`, ...head, '', body].join('\r\n'));
    }
    socket.destroy();
  });
  // CONNECT is emitted instead of 'request' (Node would close the connection without a word).
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const { status, title, headers, body } = problemAnswer(CONNECT);
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
    socket.end([`HTTP/1.1 ${status} ${title}`, ...head, '', body].join('\r\n'));
  });
  // Emitted instead of 'request', so no route sees it; the body is not read, hence the close.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const { status, headers, body } = problemAnswer(EXPECTATION_FAILED);
    res.writeHead(status, headers).end(body);
  });
}

/** The answer's status line, headers and body: the same for every client error answered here. */
function problemAnswer(answer: ClientErrorAnswer | Problem): { status: number; title: string; headers: OutgoingHttpHeaders; body: string } {
  const problem = answer instanceof Problem ? answer : new Problem(answer.status, answer.code, answer.detail);
  const json = problemJson(problem);
  const status = problem.getStatus();
  const title = String(json.title);
  const body = JSON.stringify(json);
  const headers = {
    ...problem.headers,
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
  };
  return { status, title, headers, body };
}
