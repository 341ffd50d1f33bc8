'use strict';
// What the load rows need from the seeded database: ids to aim at, and the cursor of the
// deep page. Read once, after seeding, through the harness's own session.

const path = require('node:path');
const { SEARCH_WORD, ACTIVE_SPRINT, COMMENTED_TASK, seededId } = require('./seed');

const DIST = path.resolve(__dirname, '../dist');

/**
 * The cursor of the deep page, signed exactly as the service signs it: we load the
 * service's own CursorCodec from dist/ and give it the key of service_settings, instead of
 * walking 1 999 pages through the API (which would take longer than the quick run may).
 * The harness checks it against the service before measuring (run.js: the `nextCursor` of
 * the page before must be this very cursor).
 */
function cursorCodec(hexKey) {
  const { CursorCodec } = require(path.join(DIST, 'common/pagination/cursor.js'));
  const codec = new CursorCodec(null);
  codec.key = Buffer.from(hexKey, 'hex');
  return codec;
}

/** The queries of the deep rows' lists (`limit` and `cursor` aside), as the service's validation leaves them: CursorCodec's ListQuery. */
const LIST_QUERY = { created: { query: { sort: 'created' } }, rank: { query: { sort: 'rank' } } };

/** The position after the `n`th live task (1-based) of the project, newest first. */
async function positionAfter(session, projectId, n) {
  const rows = await session.query(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, id::text AS id
       FROM tasks WHERE project_id = $1::uuid AND deleted_at IS NULL
      ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [projectId, n - 1],
  );
  return { at: new Date(rows[0].at), id: rows[0].id };
}

/** The rank of the `n`th live task (1-based) of the project in backlog order. */
async function rankAt(session, projectId, n) {
  const rows = await session.query(`SELECT rank FROM tasks WHERE project_id = $1::uuid AND deleted_at IS NULL ORDER BY rank OFFSET $2 LIMIT 1`, [
    projectId,
    n - 1,
  ]);
  return rows[0].rank;
}

/** The position after the `n`th comment (1-based) of the task, in the comment list's order (oldest first). */
async function commentPositionAfter(session, taskId, n) {
  const rows = await session.query(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, id::text AS id
       FROM comments WHERE task_id = $1::uuid ORDER BY created_at, id OFFSET $2 LIMIT 1`,
    [taskId, n - 1],
  );
  return { at: new Date(rows[0].at), id: rows[0].id };
}

/**
 * The comment list rows: the big project's task with the most comments, the cursor of its deep
 * page (page 200 of 50, signed as the service signs it) and of the page before; and what the
 * comment create row posts on: tasks of the writer project.
 */
async function commentFixtures(session, codec, big, writer, pageSize) {
  // None in a tree before comments (bench:ab reads a base tree's database with these fixtures).
  const [{ table }] = await session.query(`SELECT to_regclass('comments') IS NOT NULL AS table`);
  if (!table) return null;
  const taskId = seededId(0, 'task', COMMENTED_TASK);
  const [{ total }] = await session.query(`SELECT count(*)::int AS total FROM comments WHERE task_id = $1::uuid AND project_id = $2::uuid`, [
    taskId,
    big.id,
  ]);
  const deepPage = Math.ceil(total / pageSize);
  return {
    taskId,
    total,
    deepPage,
    deepCursor: codec.encode('comments', { query: {}, path: { taskId } }, await commentPositionAfter(session, taskId, (deepPage - 1) * pageSize)),
    cursorBeforeDeep: codec.encode(
      'comments',
      { query: {}, path: { taskId } },
      await commentPositionAfter(session, taskId, (deepPage - 2) * pageSize),
    ),
    writerTasks: await ids(
      session,
      `SELECT id::text AS id FROM tasks WHERE project_id = $1::uuid AND deleted_at IS NULL AND parent_id IS NULL ORDER BY id LIMIT 200`,
      [writer.id],
    ),
  };
}

async function ids(session, sql, params) {
  return (await session.query(sql, params)).map((row) => row.id);
}

/** What a create in `project` refers to: its members, its labels, its active sprint. */
async function createReferences(session, project) {
  const members = await ids(session, `SELECT id::text AS id FROM memberships WHERE project_id = $1::uuid ORDER BY created_at`, [project.id]);
  const labels = await ids(session, `SELECT id::text AS id FROM labels WHERE project_id = $1::uuid ORDER BY name`, [project.id]);
  const [{ id: sprint }] = await session.query(`SELECT id::text AS id FROM sprints WHERE project_id = $1::uuid AND name = $2`, [
    project.id,
    `Sprint ${ACTIVE_SPRINT}`,
  ]);
  return { projectId: project.id, members, labels, sprint };
}

/**
 * big: the 100k project (lists, detail, patch, delete+restore); writer: a small project,
 * where `create` adds its tasks so that the big project's lists keep their size; hooked:
 * another small project, with a webhook (made by run.js), for the create with a webhook.
 */
async function readFixtures(session, { big, writer, hooked, pageSize = 50, deepPage }) {
  const [{ value: cursorKey }] = await session.query(`SELECT value FROM service_settings WHERE name = 'cursor_signing_key'`);
  const codec = cursorCodec(cursorKey);
  const [{ id: assigneeId }] = await session.query(
    `SELECT id::text AS id FROM memberships WHERE project_id = $1::uuid ORDER BY created_at LIMIT 1 OFFSET 2`,
    [big.id],
  );
  // Page `deepPage` of `pageSize` starts after item (deepPage - 1) * pageSize. A cursor is bound
  // to its list's query as the service validated it (CursorCodec): `sort` has a default.
  const deepCursor = codec.encode('tasks', LIST_QUERY.created, await positionAfter(session, big.id, (deepPage - 1) * pageSize));
  const cursorBeforeDeep = codec.encode('tasks', LIST_QUERY.created, await positionAfter(session, big.id, (deepPage - 2) * pageSize));
  // The same in backlog order (sort=rank), whose cursor is the rank of the last task shown.
  const rankDeepCursor = codec.encodeKey('tasks', LIST_QUERY.rank, await rankAt(session, big.id, (deepPage - 1) * pageSize));
  const rankCursorBeforeDeep = codec.encodeKey('tasks', LIST_QUERY.rank, await rankAt(session, big.id, (deepPage - 2) * pageSize));

  // The big project's active sprint: its report and burndown rows, and the tasks patched in it.
  const [activeSprint] = await session.query(
    `SELECT s.id::text AS id,
            (SELECT count(*)::int FROM tasks t WHERE t.sprint_id = s.id AND t.deleted_at IS NULL) AS scope,
            (SELECT count(*)::int FROM sprint_ledger l WHERE l.sprint_id = s.id) AS "ledgerRows"
       FROM sprints s WHERE s.project_id = $1::uuid AND s.status = 'active'`,
    [big.id],
  );

  const withDependencies = await ids(
    session,
    `SELECT DISTINCT d.task_id::text AS id FROM task_dependencies d WHERE d.project_id = $1::uuid ORDER BY 1 LIMIT 200`,
    [big.id],
  );
  // Patched: root tasks from one end of the id order, one in four of the active sprint (its
  // tasks change most, and those changes write the sprint ledger); trashed and restored: tasks
  // without subtasks (DELETE would take the subtasks along) from the other end; moved: tasks from
  // the middle of the id order (ids are md5 hashes: anywhere in the backlog order).
  const roots = (inSprint, count) =>
    ids(
      session,
      `SELECT id::text AS id FROM tasks t WHERE project_id = $1::uuid AND parent_id IS NULL AND deleted_at IS NULL
          AND (sprint_id IS NOT DISTINCT FROM $2::uuid) = $3
        ORDER BY id LIMIT $4`,
      [big.id, activeSprint.id, inSprint, count],
    );
  const [sprintTasks, otherTasks] = [await roots(true, 500), await roots(false, 1500)];
  // Three others, then one of the sprint's, and so on.
  const patchable = [...sprintTasks.flatMap((id, i) => [...otherTasks.slice(3 * i, 3 * i + 3), id]), ...otherTasks.slice(3 * sprintTasks.length)];
  const [{ live }] = await session.query(`SELECT count(*)::int AS live FROM tasks WHERE project_id = $1::uuid AND deleted_at IS NULL`, [big.id]);
  const movable = await ids(
    session,
    `SELECT id::text AS id FROM tasks WHERE project_id = $1::uuid AND deleted_at IS NULL ORDER BY id OFFSET $2 LIMIT 2000`,
    [big.id, Math.max(0, Math.floor(live / 2) - 1000)],
  );
  const trashable = await ids(
    session,
    `SELECT id::text AS id FROM tasks t WHERE project_id = $1::uuid AND deleted_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM tasks c WHERE c.parent_id = t.id)
      ORDER BY id DESC LIMIT 2000`,
    [big.id],
  );
  const writerRefs = await createReferences(session, writer);
  const hookedRefs = hooked ? await createReferences(session, hooked) : null;
  const comments = await commentFixtures(session, codec, big, writer, pageSize);
  return {
    comments,
    assigneeId,
    searchWord: SEARCH_WORD,
    // The selective search row: a task number, which one title holds (and, as a prefix, the titles of
    // its tenfold numbers, when the project has them).
    selectiveSearch: String(Math.max(1, Math.floor(big.tasks * 0.54321))),
    deepPage,
    deepCursor,
    cursorBeforeDeep,
    rankDeepCursor,
    rankCursorBeforeDeep,
    activeSprint,
    withDependencies,
    patchable,
    trashable,
    movable,
    writer: writerRefs,
    hooked: hookedRefs,
  };
}

module.exports = { readFixtures };
