import { readdir } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { AttachmentBytes } from '../../src/attachments/attachment-bytes.service';
import { DownloadLinks } from '../../src/attachments/download-links';
import { ATTACHMENT_STORE, type AttachmentStore } from '../../src/attachments/storage/attachment-store';
import type { AppConfig } from '../../src/config/app-config';
import { createProject, createTask, ISO_TIMESTAMP, NO_SUCH_ID, type KeyClient, type TestProject, useProject } from './fixtures';
import { atOnce, describeRaces, listen, type Answer } from './races';
import { waitUntil } from './webhook-receiver';
import { startTestApp, useTestApp, type TestApp } from './test-app';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** A PNG's first bytes: its signature and the start of an IHDR chunk. */
export const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), Buffer.from('IHDR'), Buffer.alloc(17)]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>');
const HTML = Buffer.from('<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>');

const attachmentsOf = (taskId: string) => `/api/v1/tasks/${taskId}/attachments`;
const one = (taskId: string, attachmentId: string) => `${attachmentsOf(taskId)}/${attachmentId}`;

/** Posts `bytes` as the part `file` named `filename` (declared `contentType`), with more parts `fields`. */
export function upload(
  api: KeyClient,
  taskId: string,
  bytes: Buffer,
  filename = 'notes.txt',
  options: { contentType?: string; fields?: Record<string, string>; idempotencyKey?: string } = {},
) {
  let req = api.post(attachmentsOf(taskId));
  if (options.idempotencyKey) req = req.set('Idempotency-Key', options.idempotencyKey);
  for (const [name, value] of Object.entries(options.fields ?? {})) req = req.field(name, value);
  return req.attach('file', bytes, { filename, contentType: options.contentType ?? 'application/octet-stream' });
}

/** Every object of the app's store (the test's own view: the same interface the sweeper reads). */
async function storedKeys(t: TestApp): Promise<string[]> {
  const store = t.app.get<AttachmentStore>(ATTACHMENT_STORE);
  const keys: string[] = [];
  for await (const object of store.list()) keys.push(object.key);
  return keys.sort();
}

const bytesKeyOf = (projectId: string, attachment: Json) => `${projectId}/${attachment.sha256}`;

/** A request through `agent` (node:http, so that the connection it used can be told): status, and whether the connection was reused. */
async function fetchThrough(
  agent: Agent,
  url: string,
  method: string,
  key: string,
  form?: FormData,
): Promise<{ status: number; reusedSocket: boolean }> {
  const encoded = form ? new Response(form) : undefined;
  const body = encoded ? Buffer.from(await encoded.arrayBuffer()) : undefined;
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (encoded && body) Object.assign(headers, { 'content-type': encoded.headers.get('content-type')!, 'content-length': String(body.length) });
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, reusedSocket: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends a raw HTTP request and reads its answer as it comes, `body` written by `send`. */
function rawRequest(
  baseUrl: string,
  head: string,
  send: (write: (chunk: Buffer | string) => boolean, stop: () => boolean) => Promise<void>,
): Promise<{ answer: string; sentBeforeAnswer: number; sentTotal: number }> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    let sent = 0;
    let sentBeforeAnswer = -1;
    let closed = false;
    socket.on('data', (data) => {
      if (sentBeforeAnswer < 0) sentBeforeAnswer = sent;
      answer += data.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      resolve({ answer, sentBeforeAnswer: sentBeforeAnswer < 0 ? sent : sentBeforeAnswer, sentTotal: sent });
    });
    socket.on('connect', () => {
      socket.write(head);
      send(
        (chunk) => {
          if (closed || socket.destroyed) return false;
          sent += Buffer.byteLength(chunk);
          return socket.write(chunk);
        },
        () => closed || answer.length > 0,
      ).then(
        () => socket.end(),
        (error: Error) => reject(error),
      );
    });
  });
}

/**
 * Every rule of decisions.md section 24, through HTTP, for an app started with `overrides` (the
 * S3 back end runs the same suite with S3_BUCKET set): call it inside a describe.
 */
export function attachmentRules(overrides: Partial<AppConfig> = {}): void {
  const t = useTestApp({ webhookAllowPrivateUrls: true, ...overrides });
  const project = useProject(t, 'Attachments');
  const other = useProject(t, 'Another project');

  async function attach(taskId: string, bytes: Buffer = Buffer.from('hello\n'), filename = 'notes.txt', api: KeyClient = project.api): Promise<Json> {
    const res = await upload(api, taskId, bytes, filename);
    if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.attachment;
  }

  describe('the resource', () => {
    it('uploads a file: 201 {attachment} with Location, size, sha256, author, and a downloadUrl for 15 minutes', async () => {
      const task = await createTask(project);
      const bytes = Buffer.from('First line\nSecond line\n');
      const res = await upload(project.api, task.id, bytes, 'notes.txt', { contentType: 'text/markdown' }).expect(201);
      const created = res.body.attachment;
      expect(Object.keys(res.body)).toEqual(['attachment']);
      expect(res.headers.location).toBe(one(task.id, created.id));
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        taskId: task.id,
        name: 'notes.txt',
        size: bytes.length,
        contentType: 'text/plain',
        sha256: require('node:crypto').createHash('sha256').update(bytes).digest('hex'),
        author: { keyId: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Test key (API)' },
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
        downloadUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/attachment-downloads\//),
        downloadUrlExpiresAt: expect.stringMatching(ISO_TIMESTAMP),
      });
      const lifetime = Date.parse(created.downloadUrlExpiresAt) - Date.now();
      expect(lifetime).toBeGreaterThan(14 * 60_000);
      expect(lifetime).toBeLessThanOrEqual(15 * 60_000);
      const got = (await project.api.get(one(task.id, created.id)).expect(200)).body.attachment;
      expect({ ...got, downloadUrl: 0, downloadUrlExpiresAt: 0 }).toEqual({ ...created, downloadUrl: 0, downloadUrlExpiresAt: 0 });
    });

    it('lists a task’s attachments oldest first, without another task’s', async () => {
      const task = await createTask(project);
      const made = [await attach(task.id, Buffer.from('a'), 'a.txt'), await attach(task.id, Buffer.from('b'), 'b.txt')];
      await attach((await createTask(project)).id, Buffer.from('c'), 'c.txt');
      const listed = (await project.api.get(attachmentsOf(task.id)).expect(200)).body;
      expect(Object.keys(listed)).toEqual(['attachments']);
      expect(listed.attachments.map((a: Json) => a.id)).toEqual(made.map((a) => a.id));
    });

    it('answers 404 for a task or an attachment of another project, and for an attachment of another task', async () => {
      const task = await createTask(project);
      const attachment = await attach(task.id);
      await other.api.get(attachmentsOf(task.id)).expect(404);
      await other.api.get(one(task.id, attachment.id)).expect(404);
      await other.api.get(`${one(task.id, attachment.id)}/content`).expect(404);
      await upload(other.api, task.id, Buffer.from('x')).expect(404);
      const elsewhere = await createTask(project);
      await project.api.get(one(elsewhere.id, attachment.id)).expect(404);
      await project.api.get(one(task.id, NO_SUCH_ID)).expect(404);
    });
  });

  describe('content types are what the bytes are', () => {
    it('a PNG declared text/html is image/png', async () => {
      const task = await createTask(project);
      const res = await upload(project.api, task.id, PNG, 'page.html', { contentType: 'text/html' }).expect(201);
      expect(res.body.attachment.contentType).toBe('image/png');
    });

    it('UTF-8 text without NUL is text/plain; bytes with a NUL or not UTF-8 are application/octet-stream', async () => {
      const task = await createTask(project);
      expect((await attach(task.id, Buffer.from('héllo ✓ 😀\n'), 'u.txt')).contentType).toBe('text/plain');
      expect((await attach(task.id, Buffer.from('a\0b'), 'n.txt')).contentType).toBe('application/octet-stream');
      expect((await attach(task.id, Buffer.from([0x61, 0xff, 0xfe, 0x62]), 'l.txt')).contentType).toBe('application/octet-stream');
      // A multi-byte character cut by a chunk boundary is still text.
      expect((await attach(task.id, Buffer.from('é'.repeat(100_000)), 'long.txt')).contentType).toBe('text/plain');
    });

    it.each([
      ['G (an MPEG-TS sync byte)', 'Groceries: milk, eggs\n'],
      ['PL', 'PLAN: ship on Friday\n'],
      ['BM', 'BMW service notes\n'],
      ['{', '{"status": "todo"}\n'],
      ['[', '[draft] release notes\n'],
    ])('text that starts with %s is text/plain: a letter or a bracket is no magic number', async (_start, text) => {
      const task = await createTask(project);
      expect((await attach(task.id, Buffer.from(text), 'notes.txt')).contentType).toBe('text/plain');
    });

    it('binary that starts with G (0x47) but is no MPEG-TS stream is application/octet-stream; one is video/mpeg', async () => {
      const task = await createTask(project);
      const notStream = Buffer.concat([Buffer.from([0x47, 0xff, 0xfe, 0x00]), Buffer.alloc(400, 0x01)]);
      expect((await attach(task.id, notStream, 'g.bin')).contentType).toBe('application/octet-stream');
      const packet = (n: number) => Buffer.concat([Buffer.from([0x47, 0x40, n, 0x10]), Buffer.alloc(184, 0xff)]);
      expect((await attach(task.id, Buffer.concat([packet(0), packet(1)]), 'stream.ts')).contentType).toBe('video/mpeg');
    });

    it('the bytes of a BMP, JPEG, GIF, WebP and PDF are what their magic numbers say; JPEG, GIF and WebP are inline, BMP and PDF attachments', async () => {
      const task = await createTask(project);
      const bmp = Buffer.concat([Buffer.from('BM'), Buffer.from([0x3a, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 0x28, 0, 0, 0]), Buffer.alloc(40)]);
      const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00]);
      const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0x80, 0, 0])]);
      const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(16)]);
      const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
      const types = [];
      for (const [bytes, name] of [
        [bmp, 'b.bmp'],
        [jpeg, 'j.jpg'],
        [gif, 'g.gif'],
        [webp, 'w.webp'],
        [pdf, 'p.pdf'],
      ] as const) {
        const attachment = await attach(task.id, bytes, name);
        const disposition = (await project.api.get(`${one(task.id, attachment.id)}/content`).expect(200)).headers['content-disposition'];
        types.push(`${attachment.contentType} ${disposition.split(';')[0]}`);
      }
      expect(types).toEqual(['image/bmp attachment', 'image/jpeg inline', 'image/gif inline', 'image/webp inline', 'application/pdf attachment']);
    });
  });

  describe('names', () => {
    it.each([
      ['quotes', 'say "hi" it\'s.txt'],
      ['an RTL override', 'invoice\u202Etxt.exe'],
      ['emoji', '📎 plan 🚀.md'],
      ['a semicolon and a percent', 'a; filename=evil%20.txt'],
    ])('keeps a name with %s, and Content-Disposition encodes it so that it cannot break the header', async (_what, name) => {
      const task = await createTask(project);
      // As a name part: a multipart client percent-encodes quotes in a filename itself.
      const attachment = (await upload(project.api, task.id, Buffer.from('x'), 'x.txt', { fields: { name } }).expect(201)).body.attachment;
      expect(attachment.name).toBe(name);
      const res = await project.api.get(`${one(task.id, attachment.id)}/content`).expect(200);
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
      );
      expect(decodeURIComponent(/filename\*=UTF-8''(.*)$/.exec(res.headers['content-disposition'])![1])).toBe(name);
    });

    it('a filename sent with a path keeps its last segment (../ included)', async () => {
      const task = await createTask(project);
      expect((await attach(task.id, Buffer.from('x'), '../../etc/passwd')).name).toBe('passwd');
      expect((await attach(task.id, Buffer.from('x'), 'C:\\Users\\ada\\report.pdf')).name).toBe('report.pdf');
      expect((await attach(task.id, Buffer.from('x'), '📎 plan 🚀.md')).name).toBe('📎 plan 🚀.md');
    });

    it('a name part is the name instead of the filename', async () => {
      const task = await createTask(project);
      const res = await upload(project.api, task.id, Buffer.from('x'), 'upload.bin', { fields: { name: 'Quarterly report.txt' } }).expect(201);
      expect(res.body.attachment.name).toBe('Quarterly report.txt');
    });

    it.each([
      ['a newline', 'two\nlines.txt'],
      ['a slash', 'a/b.txt'],
      ['a backslash', 'a\\b.txt'],
      ['a control character', 'bell\u0007.txt'],
      ['256 code points', '😀'.repeat(256)],
      ['nothing', ''],
    ])('a name part with %s is 400 validation_failed naming name, and keeps nothing', async (_what, name) => {
      const task = await createTask(project);
      const res = await upload(project.api, task.id, Buffer.from('x'), 'ok.txt', { fields: { name } }).expect(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: Json) => e.field)).toEqual(['name']);
      expect((await project.api.get(attachmentsOf(task.id)).expect(200)).body.attachments).toEqual([]);
    });

    it('255 code points is a name', async () => {
      const task = await createTask(project);
      expect(
        (await upload(project.api, task.id, Buffer.from('x'), 'ok.txt', { fields: { name: '😀'.repeat(255) } }).expect(201)).body.attachment.name,
      ).toBe('😀'.repeat(255));
    });
  });

  describe('what an upload must be', () => {
    it('an upload is not held to the 1 MiB of JSON bodies: 3 MiB is kept whole', async () => {
      const task = await createTask(project);
      const bytes = Buffer.alloc(3 * 1024 * 1024, 'x');
      const attachment = await attach(task.id, bytes, 'three-mib.txt');
      expect([attachment.size, attachment.sha256]).toEqual([bytes.length, require('node:crypto').createHash('sha256').update(bytes).digest('hex')]);
    });

    it('an empty file is 400 validation_failed naming file', async () => {
      const task = await createTask(project);
      const res = await upload(project.api, task.id, Buffer.alloc(0), 'empty.txt').expect(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: Json) => e.field)).toEqual(['file']);
    });

    it('a part other than file and name is 400 unknown_field naming it', async () => {
      const task = await createTask(project);
      const res = await upload(project.api, task.id, Buffer.from('x'), 'x.txt', { fields: { description: 'no' } }).expect(400);
      expect(res.body.code).toBe('unknown_field');
      expect(res.body.errors.map((e: Json) => e.field)).toEqual(['description']);
      const extraFile = await project.api
        .post(attachmentsOf(task.id))
        .attach('file', Buffer.from('x'), 'x.txt')
        .attach('other', Buffer.from('y'), 'y.txt');
      expect(extraFile.status).toBe(400);
      expect(extraFile.body.code).toBe('unknown_field');
    });

    it('no part named file is 400 validation_failed naming file', async () => {
      const task = await createTask(project);
      const res = await project.api.post(attachmentsOf(task.id)).field('name', 'x.txt').expect(400);
      expect(res.body.errors.map((e: Json) => e.field)).toEqual(['file']);
    });

    it('a body that is not multipart/form-data is 415, and JSON routes still refuse multipart with 415', async () => {
      const task = await createTask(project);
      expect((await project.api.post(attachmentsOf(task.id), { file: 'x' }).expect(415)).body.code).toBe('unsupported_media_type');
      await project.api.post(attachmentsOf(task.id)).set('Content-Type', 'text/plain').send('hello').expect(415);
      const json = await project.api.post('/api/v1/tasks').attach('file', Buffer.from('x'), 'x.txt');
      expect(json.status).toBe(415);
    });

    it('needs attachments:write (403 naming it)', async () => {
      const task = await createTask(project);
      const reader = await project.issueKey(['tasks:create'], 'No attachments');
      const res = await upload(reader.api, task.id, Buffer.from('x')).expect(403);
      expect(res.body).toMatchObject({ code: 'insufficient_permission', requiredPermission: 'attachments:write' });
    });

    it('a task in the trash or absent: 404 (the trash one says so)', async () => {
      const task = await createTask(project);
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      const res = await upload(project.api, task.id, Buffer.from('x')).expect(404);
      expect(res.body.inTrash).toBe(true);
      await upload(project.api, NO_SUCH_ID, Buffer.from('x')).expect(404);
    });

    it('Idempotency-Key: the same upload again is replayed; another file under the same key is 422', async () => {
      const task = await createTask(project);
      const first = await upload(project.api, task.id, Buffer.from('once'), 'once.txt', { idempotencyKey: `att-${task.id}` }).expect(201);
      const again = await upload(project.api, task.id, Buffer.from('once'), 'once.txt', { idempotencyKey: `att-${task.id}` }).expect(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(again.headers.location).toBe(first.headers.location);
      await upload(project.api, task.id, Buffer.from('twice'), 'once.txt', { idempotencyKey: `att-${task.id}` }).expect(422);
      expect((await project.api.get(attachmentsOf(task.id)).expect(200)).body.attachments).toHaveLength(1);
    });
  });

  describe('the content', () => {
    it('serves the bytes with Content-Length, ETag "<sha256>", Accept-Ranges, nosniff and a sandboxing CSP; 304 for If-None-Match', async () => {
      const task = await createTask(project);
      const bytes = Buffer.from('0123456789');
      const attachment = await attach(task.id, bytes, 'digits.txt');
      const res = await project.api
        .get(`${one(task.id, attachment.id)}/content`)
        .responseType('blob')
        .expect(200);
      expect(Buffer.from(res.body as Buffer).toString()).toBe('0123456789');
      expect(res.headers).toMatchObject({
        'content-type': 'text/plain',
        'content-length': '10',
        etag: `"${attachment.sha256}"`,
        'accept-ranges': 'bytes',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "sandbox; default-src 'none'",
        'content-disposition': "attachment; filename*=UTF-8''digits.txt",
      });
      await project.api
        .get(`${one(task.id, attachment.id)}/content`)
        .set('If-None-Match', `"${attachment.sha256}"`)
        .expect(304);
    });

    it('PNG is inline; SVG and HTML are attachments, never inline', async () => {
      const task = await createTask(project);
      const png = await attach(task.id, PNG, 'p.png');
      const svg = await attach(task.id, SVG, 'drawing.svg');
      const html = await attach(task.id, HTML, 'page.html');
      const disposition = async (a: Json) => (await project.api.get(`${one(task.id, a.id)}/content`).expect(200)).headers['content-disposition'];
      expect(await disposition(png)).toBe("inline; filename*=UTF-8''p.png");
      expect(await disposition(svg)).toBe("attachment; filename*=UTF-8''drawing.svg");
      expect(await disposition(html)).toBe("attachment; filename*=UTF-8''page.html");
    });

    it.each([
      ['bytes=0-0', 206, '0', 'bytes 0-0/10'],
      ['bytes=9-9', 206, '9', 'bytes 9-9/10'],
      ['bytes=-3', 206, '789', 'bytes 7-9/10'],
      ['bytes=7-', 206, '789', 'bytes 7-9/10'],
      ['bytes=5-100', 206, '56789', 'bytes 5-9/10'],
      ['bytes=0-9', 206, '0123456789', 'bytes 0-9/10'],
      ['bytes=10-', 416, null, 'bytes */10'],
      ['bytes=10-20', 416, null, 'bytes */10'],
      ['bytes=0-1,4-5', 200, '0123456789', undefined],
    ])('Range %s: %i', async (range, status, body, contentRange) => {
      const task = await createTask(project);
      const attachment = await attach(task.id, Buffer.from('0123456789'), 'digits.txt');
      const res = await project.api
        .get(`${one(task.id, attachment.id)}/content`)
        .set('Range', range)
        .responseType('blob')
        .expect(status);
      expect(res.headers['content-range']).toBe(contentRange);
      if (body !== null) {
        expect(Buffer.from(res.body as Buffer).toString()).toBe(body);
        expect(res.headers['content-length']).toBe(String(body.length));
      } else expect(JSON.parse(Buffer.from(res.body as Buffer).toString()).code).toBe('range_not_satisfiable');
    });
  });

  describe('downloadUrl', () => {
    it('serves the same bytes and headers without a key', async () => {
      const task = await createTask(project);
      const attachment = await attach(task.id, SVG, 'drawing.svg');
      const url = new URL(attachment.downloadUrl);
      const res = await t.http
        .get(url.pathname + url.search)
        .responseType('blob')
        .expect(200);
      expect(Buffer.from(res.body as Buffer).equals(SVG)).toBe(true);
      expect(res.headers).toMatchObject({
        'content-type': 'image/svg+xml',
        etag: `"${attachment.sha256}"`,
        'x-content-type-options': 'nosniff',
        'content-security-policy': "sandbox; default-src 'none'",
        'content-disposition': "attachment; filename*=UTF-8''drawing.svg",
      });
    });

    it('a changed URL is 403 forbidden and reveals nothing', async () => {
      const task = await createTask(project);
      const attachment = await attach(task.id);
      const url = new URL(attachment.downloadUrl);
      const signature = url.searchParams.get('signature')!;
      const variants = [
        url.pathname + url.search.replace(signature, signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A')),
        url.pathname + url.search.replace(/expires=(\d+)/, (_m, n) => `expires=${Number(n) + 1000}`),
        url.pathname.replace(attachment.id, NO_SUCH_ID) + url.search,
        // An id changed into one that is no id of this service: a changed URL all the same.
        url.pathname.replace(attachment.id, `${attachment.id}0`) + url.search,
        url.pathname.replace(attachment.id, attachment.id.toUpperCase()) + url.search,
        url.pathname.replace(attachment.id, `${attachment.id.slice(0, 19)}c${attachment.id.slice(20)}`) + url.search,
        url.pathname,
        `${url.pathname}${url.search}&extra=1`,
      ];
      for (const variant of variants) {
        const res = await t.http.get(variant).expect(403);
        expect(res.body.code).toBe('forbidden');
        expect(JSON.stringify(res.body)).not.toContain(attachment.name);
      }
    });

    it('an expired URL is 403 forbidden', async () => {
      const task = await createTask(project);
      const attachment = await attach(task.id);
      const fakeRequest = { protocol: 'http', get: () => 'localhost' } as never;
      const expired = t.app.get(DownloadLinks).linkFor(fakeRequest, attachment.id, Date.now() - 16 * 60_000);
      const url = new URL(expired.downloadUrl);
      expect((await t.http.get(url.pathname + url.search).expect(403)).body.code).toBe('forbidden');
    });

    it('the URL of a deleted attachment, or of one whose task is in the trash, is 404', async () => {
      const task = await createTask(project);
      const deleted = await attach(task.id, Buffer.from('gone'), 'gone.txt');
      const trashed = await attach(task.id, Buffer.from('trashed'), 'trashed.txt');
      await project.api.delete(one(task.id, deleted.id)).expect(204);
      const path = (a: Json) => new URL(a.downloadUrl).pathname + new URL(a.downloadUrl).search;
      await t.http.get(path(deleted)).expect(404);
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      await t.http.get(path(trashed)).expect(404);
      await project.api.post(`/api/v1/trash/${task.id}/restore`).expect(200);
      await t.http.get(path(trashed)).expect(200);
    });
  });

  describe('deletion', () => {
    it('the uploader deletes: 204, then 404; another key needs content:moderate (403 naming it); a moderator may', async () => {
      const task = await createTask(project);
      const writer = await project.issueKey(['attachments:write'], 'Writer');
      const attachment = await attach(task.id);
      const refused = await writer.api.delete(one(task.id, attachment.id)).expect(403);
      expect(refused.body).toMatchObject({ code: 'insufficient_permission', requiredPermission: 'content:moderate' });
      const own = await attach(task.id, Buffer.from('mine'), 'mine.txt', writer.api);
      await writer.api.delete(one(task.id, own.id)).expect(204);
      await writer.api.get(one(task.id, own.id)).expect(404);
      const moderator = await project.issueKey(['content:moderate'], 'Moderator');
      await moderator.api.delete(one(task.id, attachment.id)).expect(204);
    });
  });

  describe('the trash and the bytes', () => {
    it('attachments follow their task to the trash and back; their routes are 404 with the trash hint meanwhile', async () => {
      const task = await createTask(project);
      const attachment = await attach(task.id);
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      for (const path of [attachmentsOf(task.id), one(task.id, attachment.id), `${one(task.id, attachment.id)}/content`]) {
        expect((await project.api.get(path).expect(404)).body.inTrash).toBe(true);
      }
      expect((await project.api.delete(one(task.id, attachment.id)).expect(404)).body.inTrash).toBe(true);
      await project.api.post(`/api/v1/trash/${task.id}/restore`).expect(200);
      expect((await project.api.get(attachmentsOf(task.id)).expect(200)).body.attachments.map((a: Json) => a.id)).toEqual([attachment.id]);
    });

    it('bytes are gone after a delete and after a purge', async () => {
      const own = await createProject(t, 'Bytes');
      const task = await createTask(own);
      const deleted = await attach(task.id, Buffer.from(`delete me ${own.id}`), 'd.txt', own.api);
      const purged = await attach(task.id, Buffer.from(`purge me ${own.id}`), 'p.txt', own.api);
      expect(await storedKeys(t)).toEqual(expect.arrayContaining([bytesKeyOf(own.id, deleted), bytesKeyOf(own.id, purged)]));
      await own.api.delete(one(task.id, deleted.id)).expect(204);
      await waitUntil(async () => !(await storedKeys(t)).includes(bytesKeyOf(own.id, deleted)), 5000, 'the deleted attachment’s bytes gone');
      await own.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      await t.app.get(AttachmentBytes).settled();
      expect(await storedKeys(t)).toContain(bytesKeyOf(own.id, purged));
      await own.api.delete(`/api/v1/trash/${task.id}`).expect(204);
      await waitUntil(async () => !(await storedKeys(t)).includes(bytesKeyOf(own.id, purged)), 5000, 'the purged attachment’s bytes gone');
    });

    it('the same bytes twice are stored once, and deleting one never deletes what the other still uses', async () => {
      const own = await createProject(t, 'Dedupe');
      const [a, b] = [await createTask(own), await createTask(own)];
      const bytes = Buffer.from(`shared ${own.id}`);
      const first = await attach(a.id, bytes, 'one.txt', own.api);
      const second = await attach(b.id, bytes, 'two.txt', own.api);
      expect(first.sha256).toBe(second.sha256);
      expect((await storedKeys(t)).filter((key) => key.startsWith(`${own.id}/`))).toEqual([bytesKeyOf(own.id, first)]);
      await own.api.delete(one(a.id, first.id)).expect(204);
      await own.api.delete(`/api/v1/tasks/${b.id}`).expect(204);
      await t.app.get(AttachmentBytes).settled();
      expect(await storedKeys(t)).toContain(bytesKeyOf(own.id, first));
      await own.api.post(`/api/v1/trash/${b.id}/restore`).expect(200);
      const res = await own.api
        .get(`${one(b.id, second.id)}/content`)
        .responseType('blob')
        .expect(200);
      expect(Buffer.from(res.body as Buffer).equals(bytes)).toBe(true);
      await own.api.delete(one(b.id, second.id)).expect(204);
      await waitUntil(async () => !(await storedKeys(t)).includes(bytesKeyOf(own.id, first)), 5000, 'the last one’s bytes gone');
    });

    it('the sweeper removes bytes without a row once older than an hour, and leaves fresh ones and those in use', async () => {
      const own = await createProject(t, 'Sweeper');
      const task = await createTask(own);
      const kept = await attach(task.id, Buffer.from(`kept ${own.id}`), 'kept.txt', own.api);
      const store = t.app.get<AttachmentStore>(ATTACHMENT_STORE);
      const orphan = await store.writeTemporary(require('node:stream').Readable.from([Buffer.from('never committed')]));
      const bytesWithoutRow = `${own.id}/${'a'.repeat(64)}`;
      const temporary = await store.writeTemporary(require('node:stream').Readable.from([Buffer.from('lost after commit')]));
      await store.promote(temporary, bytesWithoutRow);
      const sweeper = t.app.get(AttachmentBytes);
      await sweeper.sweep(new Date());
      expect(await storedKeys(t)).toEqual(expect.arrayContaining([orphan, bytesWithoutRow, bytesKeyOf(own.id, kept)]));
      await sweeper.sweep(new Date(Date.now() + 61 * 60_000));
      const left = await storedKeys(t);
      expect(left).not.toContain(orphan);
      expect(left).not.toContain(bytesWithoutRow);
      expect(left).toContain(bytesKeyOf(own.id, kept));
    });
  });

  describe('events', () => {
    it('attachment.created (without the download link) and attachment.deleted ({id, taskId}) are in the feed, and types filters them', async () => {
      const own = await createProject(t, 'Events');
      const task = await createTask(own);
      const attachment = await attach(task.id, Buffer.from('event'), 'e.txt', own.api);
      await own.api.delete(one(task.id, attachment.id)).expect(204);
      const events = (await own.api.get('/api/v1/events?types=attachment.created,attachment.deleted').expect(200)).body.events;
      expect(events.map((e: Json) => e.type)).toEqual(['attachment.created', 'attachment.deleted']);
      const { downloadUrl: _url, downloadUrlExpiresAt: _expires, ...shown } = attachment;
      expect(events[0].data).toEqual({ attachment: shown });
      expect(events[1].data).toEqual({ attachment: { id: attachment.id, taskId: task.id } });
    });
  });

  describe('limits (an app with small ATTACHMENT_MAX_BYTES and ATTACHMENT_QUOTA_BYTES)', () => {
    const small = useTestApp({ ...overrides, attachmentMaxBytes: 1000, attachmentQuotaBytes: 2500 });

    it('at the limit is kept; one byte over is 413 attachment_too_large with limit, and keeps nothing', async () => {
      const own = await createProject(small, 'Sizes');
      const task = await createTask(own);
      await upload(own.api, task.id, Buffer.alloc(999, 'a'), 'a.txt').expect(201);
      await upload(own.api, task.id, Buffer.alloc(1000, 'b'), 'b.txt').expect(201);
      const res = await upload(own.api, task.id, Buffer.alloc(1001, 'c'), 'c.txt').expect(413);
      expect(res.body).toMatchObject({ code: 'attachment_too_large', limit: 1000 });
      expect((await own.api.get(attachmentsOf(task.id)).expect(200)).body.attachments).toHaveLength(2);
      await waitUntil(async () => (await storedKeys(small)).filter((key) => key.startsWith('tmp/')).length === 0, 5000, 'no temporary object left');
    });

    it('the quota counts live and trashed attachments: 413 storage_quota_exceeded with limit and used', async () => {
      const own = await createProject(small, 'Quota');
      const [live, trashed] = [await createTask(own), await createTask(own)];
      await upload(own.api, live.id, Buffer.alloc(1000, 'l'), 'l.txt').expect(201);
      await upload(own.api, trashed.id, Buffer.alloc(1000, 't'), 't.txt').expect(201);
      await own.api.delete(`/api/v1/tasks/${trashed.id}`).expect(204);
      await upload(own.api, live.id, Buffer.alloc(500, 'x'), 'x.txt').expect(201);
      const res = await upload(own.api, live.id, Buffer.alloc(1, 'y'), 'y.txt').expect(413);
      expect(res.body).toMatchObject({ code: 'storage_quota_exceeded', limit: 2500, used: 2500 });
      await own.api.delete(`/api/v1/trash/${trashed.id}`).expect(204);
      await upload(own.api, live.id, Buffer.alloc(1, 'y'), 'y.txt').expect(201);
    });

    it('a task holds at most 100 attachments: the 101st is 409 conflict', async () => {
      const own = await createProject(small, 'Count');
      const task = await createTask(own);
      for (let i = 0; i < 100; i++) await upload(own.api, task.id, Buffer.from(`${i}`), `${i}.txt`).expect(201);
      expect((await upload(own.api, task.id, Buffer.from('101'), '101.txt').expect(409)).body.code).toBe('conflict');
    });

    it('a refused upload leaves its connection usable: the client reads the 413, and its next request on the same connection is answered', async () => {
      const own = await createProject(small, 'Keep-alive');
      const task = await createTask(own);
      const baseUrl = await listen(small);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const send = (path: string, method: string, body?: FormData) => fetchThrough(agent, `${baseUrl}${path}`, method, own.key, body);
      try {
        // The second round waits past the moment a connection with an unread body used to be cut.
        for (const pause of [0, 2500]) {
          const form = new FormData();
          form.append('file', new Blob([Buffer.alloc(1001, 'c')]), 'c.txt');
          const refused = await send(attachmentsOf(task.id), 'POST', form);
          expect(refused.status).toBe(413);
          await new Promise((resolve) => setTimeout(resolve, pause));
          const next = await send(attachmentsOf(task.id), 'GET');
          expect(next).toMatchObject({ status: 200, reusedSocket: true });
        }
      } finally {
        agent.destroy();
      }
    });

    it('a slow 20 MiB body is answered 413 before it is all sent, and nothing is kept', async () => {
      const own = await createProject(small, 'Slow');
      const task = await createTask(own);
      const baseUrl = await listen(small);
      const boundary = 'x-boundary-x';
      const total = 20 * 1024 * 1024;
      const opening = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      const closing = `\r\n--${boundary}--\r\n`;
      const head =
        `POST ${attachmentsOf(task.id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${own.key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${opening.length + total + closing.length}\r\n\r\n`;
      const result = await rawRequest(baseUrl, head, async (write, stop) => {
        write(opening);
        const chunk = Buffer.alloc(64 * 1024, 'z');
        for (let sent = 0; sent < total && !stop(); sent += chunk.length) {
          write(chunk);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        if (!stop()) write(closing);
      });
      expect(result.answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(result.answer).toContain('attachment_too_large');
      expect(result.sentBeforeAnswer).toBeLessThan(total / 4);
      expect((await own.api.get(attachmentsOf(task.id)).expect(200)).body.attachments).toEqual([]);
      await waitUntil(async () => (await storedKeys(small)).filter((key) => key.startsWith('tmp/')).length === 0, 5000, 'no temporary object left');
    });
  });

  describe('a restart in the middle of an upload', () => {
    it('leaves no row and, after the sweep, no bytes', async () => {
      const dir = `${require('node:os').tmpdir()}/attachments-restart-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const first = await startTestApp({ ...overrides, attachmentsDir: dir });
      const own = await createProject(first, 'Restart');
      const task = await createTask(own);
      const baseUrl = await listen(first);
      const boundary = 'restart-boundary';
      const head =
        `POST ${attachmentsOf(task.id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${own.key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10000000\r\n\r\n`;
      let stopped = false;
      const answer = rawRequest(baseUrl, head, async (write) => {
        write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\n\r\n`);
        write(Buffer.alloc(100_000, 'h'));
        while (!stopped) await new Promise((resolve) => setTimeout(resolve, 20));
      });
      // A directory shows the upload's tmp/ file at once; S3 shows an object only once its upload completes.
      if (overrides.s3Bucket) await new Promise((resolve) => setTimeout(resolve, 1000));
      else await waitUntil(async () => (await storedKeys(first)).some((key) => key.startsWith('tmp/')), 5000, 'the upload under way');
      expect(await first.prisma.attachment.count()).toBe(0);
      const httpServer = first.app.getHttpServer();
      httpServer.closeAllConnections();
      stopped = true;
      expect((await answer).answer).not.toMatch(/^HTTP\/1\.1 201/);
      expect(await first.prisma.attachment.count()).toBe(0);
      await first.close();
      const second = await startTestApp({ ...overrides, attachmentsDir: dir });
      try {
        await second.app.get(AttachmentBytes).sweep(new Date(Date.now() + 61 * 60_000));
        expect(await storedKeys(second)).toEqual([]);
        expect(await readdir(dir).catch(() => [])).not.toContain('missing');
      } finally {
        await second.close();
      }
    });
  });

  describeRaces('two uploads racing the quota', () => {
    const racing = useTestApp({ ...overrides, attachmentMaxBytes: 1000, attachmentQuotaBytes: 1000 });

    it('never both pass it: one is 201, the other 413 storage_quota_exceeded, round after round', async () => {
      const own = await createProject(racing, 'Quota race');
      const baseUrl = await listen(racing);
      const task = await createTask(own);
      const send = (text: string) => async (): Promise<Answer> => {
        const form = new FormData();
        form.append('file', new Blob([Buffer.alloc(600, text)]), `${text}.txt`);
        const res = await fetch(`${baseUrl}${attachmentsOf(task.id)}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${own.key}` },
          body: form,
        });
        return { status: res.status, body: await res.json() };
      };
      for (let round = 0; round < 30; round++) {
        const answers = await atOnce(send('a'), send('b'));
        expect(answers.map((a) => a.status).sort()).toEqual([201, 413]);
        const won = answers.find((a) => a.status === 201)!;
        expect(answers.find((a) => a.status === 413)!.body).toMatchObject({ code: 'storage_quota_exceeded', limit: 1000, used: 600 });
        await own.api.delete(one(task.id, won.body.attachment.id)).expect(204);
      }
    });
  });
}

export { type TestProject };
