'use strict';
// What the load rows need from the seeded database: ids to aim at, and the cursor of the
// deep page. Read once, after seeding, through the harness's own session.

const path = require('node:path');
const { SEARCH_WORD, ACTIVE_SPRINT } = require('./seed');

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
  // Page `deepPage` of `pageSize` starts after item (deepPage - 1) * pageSize.
  const deepCursor = codec.encode('tasks', await positionAfter(session, big.id, (deepPage - 1) * pageSize));
  const cursorBeforeDeep = codec.encode('tasks', await positionAfter(session, big.id, (deepPage - 2) * pageSize));

  const withDependencies = await ids(
    session,
    `SELECT DISTINCT d.task_id::text AS id FROM task_dependencies d WHERE d.project_id = $1::uuid ORDER BY 1 LIMIT 200`,
    [big.id],
  );
  // Patched: root tasks from one end of the id order; trashed and restored: tasks without
  // subtasks (DELETE would take the subtasks along) from the other end.
  const patchable = await ids(
    session,
    `SELECT id::text AS id FROM tasks t WHERE project_id = $1::uuid AND parent_id IS NULL AND deleted_at IS NULL
      ORDER BY id LIMIT 2000`,
    [big.id],
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
  return {
    assigneeId,
    searchWord: SEARCH_WORD,
    deepPage,
    deepCursor,
    cursorBeforeDeep,
    withDependencies,
    patchable,
    trashable,
    writer: writerRefs,
    hooked: hookedRefs,
  };
}

module.exports = { readFixtures };
