import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { useTestApp } from './support/test-app';

/** Sends `request` as raw bytes and reads the whole answer, until the server closes the connection. */
function exchange(port: number, request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
  });
}

// decisions.md sections 1 and 22: requests that Node's HTTP parser refuses are answered as
// problem+json too, not with a bare status line.
describe('requests the HTTP parser refuses', () => {
  const t = useTestApp();
  let port: number;
  beforeAll(async () => {
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });

  it('answers headers over the limit with 431 request_header_too_large as problem+json', async () => {
    const answer = await exchange(port, `GET /api/v1/tasks HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(32 * 1024)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toEqual({
      type: 'about:blank',
      title: 'Request Header Fields Too Large',
      status: 431,
      detail: expect.any(String),
      code: 'request_header_too_large',
    });
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  });

  it('answers an Expect other than 100-continue with 417 expectation_failed as problem+json, with the headers of the others', async () => {
    const answer = await exchange(
      port,
      'POST /api/v1/tasks HTTP/1.1\r\nHost: localhost\r\nExpect: 200-ok\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(answer.status).toBe(417);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({
      type: 'about:blank',
      title: 'Expectation Failed',
      status: 417,
      detail: expect.any(String),
      code: 'expectation_failed',
    });
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  });

  it('answers CONNECT with 405 method_not_allowed as problem+json, rather than closing the connection', async () => {
    const answer = await exchange(port, 'CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n');
    expect(answer.status).toBe(405);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 405, code: 'method_not_allowed' });
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  });

  it('answers a method the parser does not know as the routes answer a known one: 405 with Allow on a served path, 404 elsewhere', async () => {
    const served = await exchange(port, 'FOO /api/v1/tasks?limit=1 HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(served.status).toBe(405);
    expect(served.headers['content-type']).toBe('application/problem+json');
    const known = await exchange(port, 'PUT /api/v1/tasks HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(known.status).toBe(405);
    expect(served.headers.allow).toBe(known.headers.allow);
    expect(JSON.parse(served.body)).toMatchObject({
      status: 405,
      code: 'method_not_allowed',
      detail: expect.stringContaining('FOO is not served at /api/v1/tasks'),
    });
    const unknown = await exchange(port, 'FOO /api/v1/nothing-here HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('answers a request that is not HTTP with 400 malformed_request as problem+json', async () => {
    const answer = await exchange(port, 'HELLO THERE\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: 'malformed_request' });
  });

  it('answers a header that is not valid HTTP with 400 malformed_request as problem+json', async () => {
    const answer = await exchange(port, 'GET /health HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: 'malformed_request' });
  });

  it('answers headers over the limit as problem+json on a connection that was kept alive after an answer', async () => {
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => {
        // The first answer in full (its body is JSON): then the second request, on the same connection.
        if (!text) socket.write(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(32 * 1024)}\r\n\r\n`);
        text += chunk.toString('utf8');
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
    });
    const [first, second] = answers.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 431, code: 'request_header_too_large' });
  });
});
