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
// src/common/pagination/cursor.ts signs them (its own codec, from dist/). run.js checks that both answer the same
// JSON (not the same bytes: the service sends PostgreSQL's JSON text, spaces included).
// Like any plain handler it reads the page and counts the total on every request (the
// service remembers pages and totals per project version, src/tasks/task-list-cache.ts).
//
// It also answers the write rows (POST /api/v1/tasks, PATCH /api/v1/tasks/{id}, DELETE
// /api/v1/tasks/{id}, POST /api/v1/trash/{id}/restore) with the same database work as the
// service's writes, one transaction each: the key, the references of the body or the rows the
// write locks (one statement), then the change: its event numbers and its time taken on the
// project's event_sequences row (one), the task and its labels written (one; a new task's rank
// from its event number, as the service computes it), its rows in the sprint ledger (one; see
// LEDGER_STATEMENT), its history entry, its event and its webhook deliveries, read back as the
// API's JSON (one; see RECORD_STATEMENT for how close to src/changes/change-log.service.ts), then
// COMMIT, these last five sent together in one round trip as the service sends them (pg's
// pipeline mode). No validation beyond what the bench sends, no idempotency, no framework.
//
// Run as its own process (like the service), so that it never shares an event loop with
// the load generator: node bench/floor.js, with PORT and DATABASE_URL or DATA_DIR.

const http = require('node:http');
const { createHash, randomUUID } = require('node:crypto');
const path = require('node:path');
const { openPglite } = require('./databases');

// ---- The statement ----

const iso = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

// A task as the list shows it (the service's TaskDto), key for key.
const TASK_JSON = `json_build_object(
    'id', t.id, 'projectId', t.project_id, 'title', t.title, 'status', t.status, 'priority', t.priority,
    'parentId', t.parent_id, 'dueDate', to_char(t.due_date, 'YYYY-MM-DD'),
    'completedAt', ${iso('t.completed_at')}, 'createdAt', ${iso('t.created_at')}, 'updatedAt', ${iso('t.updated_at')},
    'estimate', t.estimate::float8, 'rank', t.rank,
    'assignee', CASE WHEN a.id IS NULL THEN NULL ELSE json_build_object('membershipId', a.id, 'name', a.name) END,
    'labels', COALESCE(lab.labels, '[]'::json),
    'sprint', CASE WHEN s.id IS NULL THEN NULL ELSE json_build_object('id', s.id, 'name', s.name, 'status', s.status) END,
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

const KEY_STATEMENT = 'SELECT project_id, name FROM api_keys WHERE secret_hash = $1 AND revoked_at IS NULL';

// ---- The writes ----

// A task in full (the service's TaskDetailDto), and as the trash lists it, over `shown t`.
const LABELS_OF = (alias) =>
  `COALESCE((SELECT json_agg(json_build_object('id', l.id, 'name', l.name, 'color', l.color) ORDER BY l.name, l.id)
               FROM task_labels tl JOIN labels l ON l.id = tl.label_id WHERE tl.task_id = ${alias}.id), '[]'::json)`;
const BLOCKED = `EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks b ON b.id = d.blocked_by_id
                  WHERE d.task_id = t.id AND b.deleted_at IS NULL AND b.status NOT IN ('done', 'cancelled'))`;
const REFS = (
  join,
  other,
) => `COALESCE((SELECT json_agg(json_build_object('id', o.id, 'title', o.title, 'status', o.status) ORDER BY d.created_at, o.id)
    FROM task_dependencies d JOIN tasks o ON o.id = d.${other} WHERE d.${join} = t.id AND o.deleted_at IS NULL), '[]'::json)`;
const taskView = (trash) => `json_build_object(
    'id', t.id, 'projectId', t.project_id, 'title', t.title,${trash ? '' : " 'description', t.description,"} 'status', t.status, 'priority', t.priority,
    'parentId', t.parent_id, 'dueDate', to_char(t.due_date, 'YYYY-MM-DD'),
    'completedAt', ${iso('t.completed_at')}, 'createdAt', ${iso('t.created_at')}, 'updatedAt', ${iso('t.updated_at')},${trash ? ` 'deletedAt', ${iso('t.deleted_at')},` : ''}
    'estimate', t.estimate::float8, 'rank', t.rank,
    'assignee', CASE WHEN a.id IS NULL THEN NULL ELSE json_build_object('membershipId', a.id, 'name', a.name) END,
    'labels', ${LABELS_OF('t')},
    'sprint', CASE WHEN s.id IS NULL THEN NULL ELSE json_build_object('id', s.id, 'name', s.name, 'status', s.status) END,
    'blocked', ${BLOCKED}${trash ? '' : `, 'dependencies', json_build_object('blockedBy', ${REFS('task_id', 'blocked_by_id')}, 'blocks', ${REFS('blocked_by_id', 'task_id')})`})`;

// The change, as src/changes/change-log.service.ts records it, sent with the COMMIT in one round
// trip. First the event numbers and the change's time, taken on the project's event_sequences
// row, whose lock then orders the project's changes until COMMIT. Then the write itself, which
// reads that time (CHANGE_TIME). Then, in a statement that starts after them (and numbers from
// the row the first one updated), the history entries, the events (built from the rows as the
// change left them), the webhook deliveries and NOTIFY, and the tasks read back.
//
// What differs from the service's statement: the task view is the floor's own SQL (the same
// JSON, key for key, but written here, not taken from src/tasks/task-view.sql.ts); only task
// records (no sprints, no dependency records, no purge), so no sprint views and no per-action
// CASEs the bench never reaches; the event's data is built from the view by one CASE instead
// of the service's LATERAL joins; NOTIFY always names the project and adds ':webhooks' when
// deliveries were queued, as the service does.

/** The next event numbers and the change's time: $1 project, $2 how many. */
const CLAIM_STATEMENT = `
WITH claimed AS (
  INSERT INTO event_sequences AS s (project_id, last_sequence, last_change_at)
  VALUES ($1::uuid, $2::int, date_trunc('milliseconds', clock_timestamp()))
  ON CONFLICT (project_id) DO UPDATE SET last_sequence = s.last_sequence + $2::int,
    last_change_at = greatest(s.last_change_at + interval '1 millisecond', date_trunc('milliseconds', clock_timestamp()))
  RETURNING last_change_at)
SELECT set_config('planning.change_at', last_change_at::text, true) FROM claimed`;

/** The change's time, in the statements sent after the claim. */
const CHANGE_TIME = `current_setting('planning.change_at')::timestamptz`;

/**
 * The rest of the change: history entries, events, webhook deliveries and NOTIFY, and the
 * tasks as the change left them. $1 project, $2 actor, $3 the records as JSON
 * [{ord, task_id, action, changes}], $4 the task ids (an array, as the service passes them:
 * the planner would scan the project for a subquery), $5 how many records.
 */
const RECORD_STATEMENT = `
WITH numbered AS (SELECT last_sequence - $5::int AS before FROM event_sequences WHERE project_id = $1::uuid),
input AS (SELECT * FROM json_to_recordset($3::json) AS r(ord int, task_id uuid, action text, changes json)),
history AS (
  INSERT INTO history_entries (project_id, task_id, actor, action, changes, created_at)
  SELECT $1::uuid, i.task_id, $2, i.action, COALESCE(i.changes, '[]'::json), ${CHANGE_TIME} FROM input i),
views AS (
  SELECT t.id, CASE WHEN t.deleted_at IS NULL THEN ${taskView(false)} ELSE ${taskView(true)} END AS view
    FROM tasks t LEFT JOIN memberships a ON a.id = t.assignee_id LEFT JOIN sprints s ON s.id = t.sprint_id
   WHERE t.id = ANY($4::uuid[]) AND t.project_id = $1::uuid),
events AS (
  INSERT INTO events (project_id, sequence, type, actor, occurred_at, data)
  SELECT $1::uuid, n.before + i.ord, 'task.' || i.action, $2, ${CHANGE_TIME},
         CASE WHEN i.action = 'updated' THEN json_build_object('task', v.view, 'changes', i.changes) ELSE json_build_object('task', v.view) END
    FROM input i JOIN views v ON v.id = i.task_id CROSS JOIN numbered n
  RETURNING id, type),
deliveries AS (
  INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, next_attempt_at, created_at)
  SELECT $1::uuid, w.id, e.id, ${CHANGE_TIME}, ${CHANGE_TIME}
    FROM events e JOIN webhooks w ON w.project_id = $1::uuid AND w.enabled AND (e.type = ANY(w.events) OR '*' = ANY(w.events))
  RETURNING 1)
SELECT pg_notify('project_changes', $1::uuid::text || CASE WHEN EXISTS (SELECT FROM deliveries) THEN ':webhooks' ELSE '' END)::text AS notified,
       (SELECT COALESCE(json_object_agg(id, view), '{}'::json) FROM views) AS tasks`;

const REFERENCES_STATEMENT = `
SELECT EXISTS (SELECT 1 FROM memberships WHERE id = $2::uuid AND project_id = $1::uuid) AS assignee,
       (SELECT status::text FROM sprints WHERE id = $3::uuid AND project_id = $1::uuid FOR SHARE) AS sprint,
       (SELECT count(*)::int FROM labels WHERE id = ANY($4::uuid[]) AND project_id = $1::uuid) AS labels`;

// A new task goes to the bottom of the backlog order: its rank from the number of its created
// event, which the claim just took (src/tasks/task-ranks.ts: 2^62 + sequence x 2^32, 16 hex digits).
const INSERT_STATEMENT = `
WITH task AS (
  INSERT INTO tasks (id, project_id, title, description, status, priority, assignee_id, sprint_id, due_date, estimate, completed_at,
                     created_at, updated_at, rank)
  VALUES ($1::uuid, $2::uuid, $3, $4, $5::task_status, $6::task_priority, $7::uuid, $8::uuid, $9::date, $11::numeric,
          CASE WHEN $5 = 'done' THEN ${CHANGE_TIME} END, ${CHANGE_TIME}, ${CHANGE_TIME},
          lpad(to_hex(4611686018427387904 + (SELECT last_sequence FROM event_sequences WHERE project_id = $2::uuid) * 4294967296), 16, '0'))
  RETURNING id)
INSERT INTO task_labels (project_id, task_id, label_id) SELECT $2::uuid, task.id, l FROM task, unnest($10::uuid[]) AS l`;

/**
 * The sprint ledger (src/sprints/sprint-ledger.sql.ts), for what a create, patch, delete or
 * restore can do: a row for each task of the change that is in the project's active sprint's
 * scope (live, in the sprint) or was when the ledger last saw it, when that or its estimate or
 * status changed. $1 project, $2 the task ids.
 */
const LEDGER_STATEMENT = `
INSERT INTO sprint_ledger (project_id, sprint_id, task_id, kind, in_scope, estimate, status, title, at)
SELECT $1::uuid, s.id, t.id, 'changed', scope.in_scope, t.estimate, t.status, t.title, ${CHANGE_TIME}
  FROM sprints s
  JOIN tasks t ON t.id = ANY($2::uuid[]) AND t.project_id = $1::uuid
 CROSS JOIN LATERAL (SELECT t.deleted_at IS NULL AND t.sprint_id IS NOT DISTINCT FROM s.id AS in_scope) scope
  LEFT JOIN LATERAL (SELECT l.in_scope, l.estimate, l.status FROM sprint_ledger l
                      WHERE l.sprint_id = s.id AND l.task_id = t.id ORDER BY l.id DESC LIMIT 1) last ON true
 WHERE s.project_id = $1::uuid AND s.status = 'active'
   AND (scope.in_scope OR COALESCE(last.in_scope, false))
   AND (last.in_scope IS DISTINCT FROM scope.in_scope OR last.estimate IS DISTINCT FROM t.estimate OR last.status IS DISTINCT FROM t.status)`;

const LOCK_STATEMENT = `SELECT title, priority::text, estimate::float8 FROM tasks WHERE id = $1::uuid AND project_id = $2::uuid AND deleted_at IS NULL FOR NO KEY UPDATE`;

/** The bench's write rows, with the database work of the service's writes (see the top of this file). */
async function write(db, req, url, key, body) {
  const actor = `${key.name} (API)`;
  // The change: its claim, its write, its sprint ledger rows, its record, with the COMMIT.
  const record = async (tx, records, write) => {
    const answers = await tx.finish([
      { name: 'floor_claim', text: CLAIM_STATEMENT, values: [key.project_id, records.length] },
      write,
      { name: 'floor_ledger', text: LEDGER_STATEMENT, values: [key.project_id, records.map((r) => r.task_id)] },
      {
        name: 'floor_record',
        text: RECORD_STATEMENT,
        values: [key.project_id, actor, JSON.stringify(records.map((r, i) => ({ ord: i + 1, ...r }))), records.map((r) => r.task_id), records.length],
      },
    ]);
    return answers[3];
  };
  const task = /^\/api\/v1\/tasks\/([0-9a-f-]{36})$/.exec(url.pathname);
  const restore = /^\/api\/v1\/trash\/([0-9a-f-]{36})\/restore$/.exec(url.pathname);
  if (req.method === 'POST' && url.pathname === '/api/v1/tasks') {
    return db.transaction(async (tx) => {
      const labelIds = [...new Set(body.labelIds ?? [])].sort();
      const [found] = await tx.query({
        name: 'floor_refs',
        text: REFERENCES_STATEMENT,
        values: [key.project_id, body.assigneeId ?? null, body.sprintId ?? null, labelIds],
      });
      if (
        (body.assigneeId && !found.assignee) ||
        (body.sprintId && (!found.sprint || found.sprint === 'closed')) ||
        found.labels !== labelIds.length
      ) {
        return { status: 404 };
      }
      const id = randomUUID();
      const fields = [
        body.title,
        body.description ?? null,
        body.status ?? 'backlog',
        body.priority ?? 'none',
        body.assigneeId ?? null,
        body.sprintId ?? null,
        body.dueDate ?? null,
      ];
      const names = ['title', 'description', 'status', 'priority', 'assigneeId', 'sprintId', 'dueDate'];
      const changes = names.map((field, i) => ({ field, from: null, to: fields[i] })).filter((c) => c.to !== null);
      if (body.estimate !== undefined && body.estimate !== null) changes.push({ field: 'estimate', from: null, to: body.estimate });
      if (labelIds.length) changes.push({ field: 'labelIds', from: [], to: labelIds });
      const [row] = await record(tx, [{ task_id: id, action: 'created', changes }], {
        name: 'floor_insert',
        text: INSERT_STATEMENT,
        values: [id, key.project_id, ...fields, labelIds, body.estimate ?? null],
      });
      return { status: 201, body: { task: row.tasks[id] }, location: `/api/v1/tasks/${id}` };
    });
  }
  if (req.method === 'PATCH' && task) {
    return db.transaction(async (tx) => {
      const [current] = await tx.query({ name: 'floor_lock', text: LOCK_STATEMENT, values: [task[1], key.project_id] });
      if (!current) return { status: 404 };
      const next = {
        title: body.title ?? current.title,
        priority: body.priority ?? current.priority,
        estimate: body.estimate !== undefined ? body.estimate : current.estimate,
      };
      const changes = ['title', 'priority', 'estimate']
        .filter((field) => next[field] !== current[field])
        .map((field) => ({ field, from: current[field], to: next[field] }));
      const [row] = await record(tx, [{ task_id: task[1], action: 'updated', changes }], {
        name: 'floor_update',
        text: `UPDATE tasks SET title = $2, priority = $3::task_priority, estimate = $4::numeric, updated_at = ${CHANGE_TIME} WHERE id = $1::uuid`,
        values: [task[1], next.title, next.priority, next.estimate],
      });
      return { status: 200, body: { task: row.tasks[task[1]] } };
    });
  }
  if (req.method === 'DELETE' && task) {
    return db.transaction(async (tx) => {
      // The task and its live subtasks, locked (the service sends these two statements in one round trip).
      const trashed = await tx.query({
        name: 'floor_lock_trash',
        text: `SELECT id::text FROM tasks WHERE project_id = $2::uuid AND deleted_at IS NULL AND (id = $1::uuid OR parent_id = $1::uuid)
                ORDER BY id FOR NO KEY UPDATE`,
        values: [task[1], key.project_id],
      });
      if (!trashed.some((row) => row.id === task[1])) return { status: 404 };
      const ids = trashed.map((row) => row.id);
      await record(
        tx,
        ids.map((id) => ({ task_id: id, action: 'deleted' })),
        {
          name: 'floor_trash',
          text: `UPDATE tasks SET deleted_at = ${CHANGE_TIME}, trashed_with_id = $1::uuid, updated_at = ${CHANGE_TIME} WHERE id = ANY($2::uuid[])`,
          values: [task[1], ids],
        },
      );
      return { status: 204 };
    });
  }
  if (req.method === 'POST' && restore) {
    return db.transaction(async (tx) => {
      const restored = await tx.query({
        name: 'floor_lock_restore',
        text: `SELECT id::text FROM tasks
                WHERE project_id = $2::uuid AND deleted_at IS NOT NULL AND (id = $1::uuid OR (trashed_with_id = $1::uuid AND parent_id = $1::uuid))
                ORDER BY id FOR NO KEY UPDATE`,
        values: [restore[1], key.project_id],
      });
      if (!restored.some((row) => row.id === restore[1])) return { status: 404 };
      const ids = restored.map((row) => row.id);
      const [row] = await record(
        tx,
        ids.map((id) => ({ task_id: id, action: 'restored' })),
        {
          name: 'floor_restore',
          text: `UPDATE tasks SET deleted_at = NULL, trashed_with_id = NULL, updated_at = ${CHANGE_TIME} WHERE id = ANY($1::uuid[])`,
          values: [ids],
        },
      );
      return { status: 200, body: { task: row.tasks[restore[1]] } };
    });
  }
  return { status: 404 };
}

/** The filters of a query string, and the statement's parameter values. */
function listRequest(searchParams, projectId, decodeCursor) {
  const limit = Math.min(100, Math.max(1, Number(searchParams.get('limit') ?? 50) || 50));
  const filters = {
    status: searchParams.get('status') || null,
    assigneeId: searchParams.get('assigneeId') || null,
    q: searchParams.get('q') || null,
  };
  filters.cursor = searchParams.get('cursor') ? decodeCursor(filters, searchParams.get('cursor')) : null;
  const values = [projectId, limit + 1];
  if (filters.status) values.push(filters.status);
  if (filters.assigneeId) values.push(filters.assigneeId);
  if (filters.q) values.push(`%${filters.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (filters.cursor) values.push(filters.cursor.at, filters.cursor.id);
  return { limit, filters, text: listStatement(filters), values };
}

// ---- Cursors: the service's own CursorCodec (from dist/, as fixtures.js loads it) ----

/**
 * A cursor is bound to the query that issued it (a digest of its validated parameters), so the
 * floor signs and opens them with the service's codec rather than a copy of its format. The
 * query is what the service's validation leaves: the filters sent and the default `sort`.
 */
function cursorCodec(hexKey) {
  const { CursorCodec } = require(path.join(__dirname, '../dist/common/pagination/cursor.js'));
  const codec = new CursorCodec(null);
  codec.key = Buffer.from(hexKey, 'hex');
  return floorCursors(codec);
}

/** The floor's lists' cursors through `codec` (the service's CursorCodec): the position opened as the statement takes it. */
function floorCursors(codec) {
  const listOf = (filters, cursor) => {
    const query = { sort: 'created', cursor: cursor ?? undefined };
    for (const name of ['status', 'assigneeId', 'q']) if (filters[name]) query[name] = filters[name];
    return { query };
  };
  return {
    encode: (filters, at, id) => codec.encode('tasks', listOf(filters), { at: new Date(at), id }),
    decode(filters, cursor) {
      try {
        const position = codec.positionAfter('tasks', listOf(filters, cursor));
        return { at: position.at.toISOString(), id: position.id };
      } catch {
        return null;
      }
    },
  };
}

// ---- Database access: pg pool or PGlite ----

async function openDatabase(env) {
  if (env.DATABASE_URL) {
    const { Pool } = require('pg');
    // As many connections as the service's pool (src/database/database-engine.ts).
    // UTC as a startup parameter, as the service does: a SET on connect would race the first query.
    // pipeline: the last statements and the COMMIT go out together (finish), as the service sends them.
    const pool = new Pool({ connectionString: env.DATABASE_URL, max: 10, options: '-c TimeZone=UTC -c jit=off', pipeline: true });
    return {
      query: async (statement) => (await pool.query(statement)).rows,
      async transaction(work) {
        const client = await pool.connect();
        let committed = false;
        let begun = false;
        // As the service sends them (src/database/database-engine.ts): BEGIN with the first
        // statements, and each batch in one socket write. (The service waits for BEGIN's answer
        // before a first batch that commits; the floor, a lower bound, does not.)
        const send = async (statements, commit) => {
          const skip = begun ? 0 : 1;
          client.connection.stream.cork();
          let sent;
          try {
            sent = [...(begun ? [] : [client.query('BEGIN')]), ...statements.map((statement) => client.query(statement))];
            if (commit) sent.push(client.query('COMMIT'));
          } finally {
            client.connection.stream.uncork();
          }
          begun = true;
          const answers = await Promise.all(sent);
          if (commit && answers.pop().command !== 'COMMIT') throw new Error('rolled back');
          return answers.slice(skip);
        };
        try {
          const result = await work({
            query: async (statement) => (await send([statement], false))[0].rows,
            async finish(statements) {
              committed = true;
              return (await send(statements, true)).map((answer) => answer.rows);
            },
          });
          if (!committed && begun) await client.query('COMMIT');
          return result;
        } catch (error) {
          if (begun) await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    };
  }
  const db = await openPglite(env.DATA_DIR);
  return {
    query: async (statement) => (await db.query(statement.text, statement.values)).rows,
    transaction: (work) =>
      db.transaction((tx) => {
        const query = async (statement) => (await tx.query(statement.text, statement.values)).rows;
        return work({
          query,
          async finish(statements) {
            const answers = [];
            for (const statement of statements) answers.push(await query(statement));
            return answers;
          },
        });
      }),
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
    if (url.pathname === '/ready') return void res.writeHead(200).end();
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (!match) return void res.writeHead(401).end();
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const keyHash = createHash('sha256').update(match[1]).digest('hex');
      const [key] = await db.query({ name: 'floor_key', text: KEY_STATEMENT, values: [keyHash] });
      if (!key) return void res.writeHead(401).end();
      if (req.method !== 'GET') {
        const answer = await write(db, req, url, key, chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {});
        const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
        const headers = text ? { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) } : {};
        if (answer.location) headers.Location = answer.location;
        return void res.writeHead(answer.status, headers).end(text);
      }
      if (url.pathname !== '/api/v1/tasks') return void res.writeHead(404).end();
      const statement = listRequest(url.searchParams, key.project_id, (filters, cursor) => cursors.decode(filters, cursor));
      const [row] = await db.query(statement);
      const tasks = row.tasks ?? [];
      const shown = tasks.length > statement.limit ? tasks.slice(0, statement.limit) : tasks;
      const last = shown[shown.length - 1];
      const nextCursor = tasks.length > statement.limit ? cursors.encode(statement.filters, last.createdAt, last.id) : null;
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

module.exports = {
  listStatement,
  listRequest,
  floorCursors,
  // The statements of a create, for transaction-cost.js.
  floorStatements: { REFERENCES_STATEMENT, CLAIM_STATEMENT, INSERT_STATEMENT, LEDGER_STATEMENT, RECORD_STATEMENT },
};
