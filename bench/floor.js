'use strict';
// The floor: the least a Node process can do to answer the task list, to compare the
// service with. Plain node:http, one pool of `pg` connections (or one PGlite), two SQL
// statements per request (the key, by its hash, as the service looks it up on every
// request; then the page, its joins and the total in one statement), and JSON.stringify
// of the result. No framework, no validation beyond what is needed to build the
// statement, no rate limit.
//
// The list statement is sent unnamed, so PostgreSQL plans it for the actual project, as
// it does for the service: a generic plan (named prepared statement) cannot tell the
// 100k-task project from the small ones and chose a worse plan for the filtered list.
//
// It answers GET /api/v1/tasks with limit, cursor, status, assigneeId and q — the
// parameters the benchmark's list rows use — with the service's JSON: the same values,
// keys in the same order, and cursors signed with the key of service_settings as
// src/common/pagination/cursor.ts signs them. run.js checks that both answer the same
// JSON (not the same bytes: the service sends PostgreSQL's JSON text, spaces included).
// Like any plain handler it reads the page and counts the total on every request (the
// service remembers pages and totals per project version, src/tasks/task-list-cache.ts).
//
// Run as its own process (like the service), so that it never shares an event loop with
// the load generator: node bench/floor.js, with PORT and DATABASE_URL or DATA_DIR.

const http = require('node:http');
const { createHash, createHmac } = require('node:crypto');

// ---- The statement ----

const iso = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

// A task as the list shows it (the service's TaskDto), key for key.
const TASK_JSON = `json_build_object(
    'id', t.id, 'projectId', t.project_id, 'title', t.title, 'status', t.status, 'priority', t.priority,
    'parentId', t.parent_id,
    'assignee', CASE WHEN a.id IS NULL THEN NULL ELSE json_build_object('membershipId', a.id, 'name', a.name) END,
    'labels', COALESCE(lab.labels, '[]'::json),
    'sprint', CASE WHEN s.id IS NULL THEN NULL ELSE json_build_object('id', s.id, 'name', s.name, 'status', s.status) END,
    'dueDate', to_char(t.due_date, 'YYYY-MM-DD'),
    'completedAt', ${iso('t.completed_at')}, 'createdAt', ${iso('t.created_at')}, 'updatedAt', ${iso('t.updated_at')},
    'blocked', blk.task_id IS NOT NULL)`;

/**
 * The statement for one combination of filters. Parameters: $1 project id, $2 rows to
 * fetch (limit + 1), then the filters present, in the order status, assigneeId, q, cursor.
 *
 * The labels and the "blocked" flag are read for the whole page at once (page_labels,
 * page_blocked), by index from the page's ids: a correlated subquery per row was planned
 * as a hash join over the whole labels table once per row, and an EXISTS in a LATERAL
 * as a hashed subplan over every dependency of the database.
 */
function listStatement({ status, assigneeId, q, cursor }) {
  const filters = [];
  let n = 2;
  if (status) filters.push(`t.status = ANY (string_to_array($${++n}, ',')::task_status[])`);
  if (assigneeId) filters.push(`t.assignee_id = $${++n}::uuid`);
  if (q) filters.push(`t.title ILIKE $${++n}`);
  const matching = ['t.project_id = $1::uuid', 't.deleted_at IS NULL', ...filters].join(' AND ');
  const keyset = cursor ? ` AND (t.created_at, t.id) < ($${++n}::timestamptz, $${++n}::uuid)` : '';
  return `WITH page AS (SELECT t.* FROM tasks t WHERE ${matching}${keyset} ORDER BY t.created_at DESC, t.id DESC LIMIT $2),
page_labels AS (
  SELECT tl.task_id, json_agg(json_build_object('id', l.id, 'name', l.name, 'color', l.color) ORDER BY l.name, l.id) AS labels
    FROM page p JOIN task_labels tl ON tl.task_id = p.id JOIN labels l ON l.id = tl.label_id
   GROUP BY tl.task_id),
page_blocked AS (
  SELECT DISTINCT d.task_id
    FROM page p JOIN task_dependencies d ON d.task_id = p.id JOIN tasks b ON b.id = d.blocked_by_id
   WHERE b.deleted_at IS NULL AND b.status NOT IN ('done', 'cancelled'))
SELECT (SELECT count(*)::int FROM tasks t WHERE ${matching}) AS total,
       (SELECT json_agg(${TASK_JSON} ORDER BY t.created_at DESC, t.id DESC)
          FROM page t
          LEFT JOIN memberships a ON a.id = t.assignee_id
          LEFT JOIN sprints s ON s.id = t.sprint_id
          LEFT JOIN page_labels lab ON lab.task_id = t.id
          LEFT JOIN page_blocked blk ON blk.task_id = t.id) AS tasks`;
}

const KEY_STATEMENT = 'SELECT project_id FROM api_keys WHERE secret_hash = $1 AND revoked_at IS NULL';

/** The filters of a query string, and the statement's parameter values. */
function listRequest(searchParams, projectId, decodeCursor) {
  const limit = Math.min(100, Math.max(1, Number(searchParams.get('limit') ?? 50) || 50));
  const filters = {
    status: searchParams.get('status') || null,
    assigneeId: searchParams.get('assigneeId') || null,
    q: searchParams.get('q') || null,
    cursor: searchParams.get('cursor') ? decodeCursor(searchParams.get('cursor')) : null,
  };
  const values = [projectId, limit + 1];
  if (filters.status) values.push(filters.status);
  if (filters.assigneeId) values.push(filters.assigneeId);
  if (filters.q) values.push(`%${filters.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (filters.cursor) values.push(filters.cursor.at, filters.cursor.id);
  return { limit, text: listStatement(filters), values };
}

// ---- Cursors, as CursorCodec writes them ----

function cursorCodec(hexKey) {
  const key = Buffer.from(hexKey, 'hex');
  const sign = (payload) => createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url');
  return {
    encode(at, id) {
      const payload = Buffer.from(JSON.stringify(['tasks', new Date(at).toISOString(), id])).toString('base64url');
      return `${payload}.${sign(payload)}`;
    },
    decode(cursor) {
      const [payload, signature] = cursor.split('.');
      if (!payload || sign(payload) !== signature) return null;
      const [, at, id] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      return { at, id };
    },
  };
}

// ---- Database access: pg pool or PGlite ----

async function openDatabase(env) {
  if (env.DATABASE_URL) {
    const { Pool } = require('pg');
    // As many connections as the service's pool (src/database/database-engine.ts).
    const pool = new Pool({ connectionString: env.DATABASE_URL, max: 10 });
    return {
      query: async (statement) => (await pool.query(statement)).rows,
      close: () => pool.end(),
    };
  }
  const { PGlite } = require('@electric-sql/pglite');
  const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm');
  const db = await PGlite.create({ dataDir: env.DATA_DIR, extensions: { pg_trgm } });
  return {
    query: async (statement) => (await db.query(statement.text, statement.values)).rows,
    close: () => db.close(),
  };
}

// ---- The server ----

async function main() {
  const db = await openDatabase(process.env);
  const [{ value }] = await db.query({ text: `SELECT value FROM service_settings WHERE name = 'cursor_signing_key'`, values: [] });
  const cursors = cursorCodec(value);

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://floor');
    if (req.method !== 'GET' || url.pathname !== '/api/v1/tasks') {
      res.writeHead(url.pathname === '/ready' ? 200 : 404).end();
      return;
    }
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (!match) return void res.writeHead(401).end();
    try {
      const keyHash = createHash('sha256').update(match[1]).digest('hex');
      const [key] = await db.query({ name: 'floor_key', text: KEY_STATEMENT, values: [keyHash] });
      if (!key) return void res.writeHead(401).end();
      const statement = listRequest(url.searchParams, key.project_id, (cursor) => cursors.decode(cursor));
      const [row] = await db.query(statement);
      const tasks = row.tasks ?? [];
      const shown = tasks.length > statement.limit ? tasks.slice(0, statement.limit) : tasks;
      const last = shown[shown.length - 1];
      const nextCursor = tasks.length > statement.limit ? cursors.encode(last.createdAt, last.id) : null;
      const body = JSON.stringify({ tasks: shown, nextCursor, total: row.total });
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    } catch (error) {
      res.writeHead(500).end(String(error && error.message));
    }
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write(`floor listening on ${process.env.PORT}\n`));

  const stop = () => server.close(() => db.close().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

module.exports = { listStatement, listRequest };
