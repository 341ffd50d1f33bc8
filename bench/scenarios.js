'use strict';
// The rows of the table, as load.js scenarios. Reads and patches aim at the big project;
// create adds its tasks to a small project ("writer"), so that the big project keeps its
// size (the list rows run before the writes anyway); the create with a webhook adds its
// tasks to another small project ("hooked"), the only one with a webhook. Patch and
// delete+restore cycle over pools of existing tasks, so no run can exhaust them.
//
// A row with `prepare(baseUrl)` needs something from the server it is measured on before it
// runs (an ETag, a primed Idempotency-Key, where the feed starts): run.js calls it first and
// reports what it throws as a check failure.

const { randomBytes } = require('node:crypto');
const { fetchJson } = require('./load');

const PRIORITIES = ['urgent', 'high', 'medium', 'low', 'none'];
/** The estimates the patch row cycles through (seven: a task patched again gets another one, mostly). */
const ESTIMATES = [1, 2, 3, 5, 8, 13, 0.5];
/** Tasks per request of the bulk create row (the most POST /api/v1/tasks/bulk takes). */
const BULK_SIZE = 100;
/** Connections of the bulk create row. */
const BULK_CONNECTIONS = 4;
/** Events per read of the feed row. */
const FEED_LIMIT = 100;
/**
 * Connections of the sprint report rows: a few people opening reports at once, not a crowd (32
 * reports queued at once would each wait for the others, and keep the database busy into the
 * next row after the row stops sending).
 */
const REPORT_CONNECTIONS = 4;
/** Open tasks in the sprint the close row closes (issue 35): they move to the next sprint at each close. */
const CLOSE_SCOPE = 1000;
/**
 * Planned sprints the close row makes ready, one taken by each close: more than a bench:ab run
 * of 5 rounds of 8 s takes at a few closes a second (a close beyond them fails, and counts as an error).
 */
const CLOSE_POOL = 400;

/** A create body (with assignee, 2 labels, sprint, due date) in the project of `refs` (fixtures.js createReferences). */
function createBody(refs, n) {
  const { members, labels } = refs;
  return {
    title: `Bench created task ${n}`,
    description: 'Created by the benchmark: a short description, as most tasks have.',
    status: 'todo',
    priority: PRIORITIES[n % PRIORITIES.length],
    assigneeId: members[n % members.length],
    labelIds: [labels[n % labels.length], labels[(n + 7) % labels.length]],
    sprintId: refs.sprint,
    dueDate: '2027-03-15',
  };
}

/**
 * `closerKey` and `adminToken` (the service's ADMIN_TOKEN): the close row's project, one no other
 * row writes to, and the admin interface that activates and closes sprints (bench:ab passes them).
 */
function scenarios({ bigKey, writerKey, hookedKey, closerKey, adminToken, fixtures, connections }) {
  const auth = (key) => ({ authorization: `Bearer ${key}` });
  const big = auth(bigKey);
  const writer = auth(writerKey);
  const filtered = `/api/v1/tasks?status=todo,in_progress&assigneeId=${fixtures.assigneeId}&q=${fixtures.searchWord}`;
  // Issue 38's searches, repeated and right after a change: a task number, and four verbs of the
  // seed's twelve (a third of the titles).
  const selectiveSearch = `/api/v1/tasks?search=${fixtures.selectiveSearch}`;
  const broadSearch = `/api/v1/tasks?search=${encodeURIComponent('fix or add or update or remove')}`;
  // Idempotency keys differ from one run (and one server) to the next.
  const run = randomBytes(4).toString('hex');
  const count = (n) => n.toLocaleString('en-US');
  const sprint = fixtures.activeSprint;
  let detailCount = 0;
  let moveCount = 0;
  let createCount = 0;
  let patchCount = 0;
  let bulkCount = 0;
  let commentCount = 0;
  const create = (refs) => () => ({ method: 'POST', path: '/api/v1/tasks', body: createBody(refs, createCount++) });

  // The conditional list: the ETag the list answered just before the row.
  let listTag = null;
  // The replay: Idempotency-Keys not in use by another request (see createReplay).
  let replayKeys = [];
  const replayBody = createBody(fixtures.writer, 0);
  // The feed: where the read of FEED_LIMIT events starts.
  let feedAfter = null;
  // The filtered list after a change: tasks on its page, patched so that they stay on it.
  let filteredTasks = [];
  /** A change of the big project: a new title for one of its tasks. */
  const patchTitle = () => {
    const n = patchCount++;
    const id = fixtures.patchable[n % fixtures.patchable.length];
    return { method: 'PATCH', path: `/api/v1/tasks/${id}`, body: { title: `Bench patch ${n}` } };
  };

  // delete+restore: each iteration takes a task out of the pool and puts it back once
  // restored, so that no two connections ever hold the same task.
  const pool = [...fixtures.trashable];
  const taken = new Set();
  // move: each iteration takes two tasks out of this pool (the one moved, the one it is placed
  // against) and puts them back when answered, so that no two requests in flight share a task.
  const movable = [...fixtures.movable];
  // The close row: the sprint it closes next, and the planned sprints its tasks move to.
  let activeSprint = null;
  let plannedSprints = [];
  const admin = { authorization: `Bearer ${adminToken}` };
  /** A request of the close row's set-up, in the closer project (or the admin interface); its answer's body. */
  const closerCall = async (baseUrl, step) => {
    const answer = await fetchJson(baseUrl, { headers: auth(closerKey) }, step);
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`${step.method} ${step.path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.body;
  };

  return {
    listDefault: { name: 'list, default page', headers: big, steps: [() => ({ method: 'GET', path: '/api/v1/tasks' })] },
    listFiltered: {
      name: 'list, status + assigneeId + q',
      headers: big,
      steps: [() => ({ method: 'GET', path: filtered })],
    },
    listDeep: {
      name: `list, page ${fixtures.deepPage} by cursor`,
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks?limit=50&cursor=${fixtures.deepCursor}` })],
    },
    // The page before the deep one: its nextCursor must be our deep cursor (run.js checks).
    listBeforeDeep: {
      name: 'page before the deep one',
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks?limit=50&cursor=${fixtures.cursorBeforeDeep}` })],
    },
    // Search (issue 38, decisions.md section 25): title, description and comments, exact totals.
    // The filter language (issue 38): four conditions, one of them reading task_labels would
    // count totals again after every change; these four read the task row, as most filters do.
    filterFour: {
      name: 'filter, four conditions',
      headers: big,
      steps: [
        () => ({
          method: 'GET',
          path: `/api/v1/tasks?filter=${encodeURIComponent(
            `status in (todo, in_progress) and priority != none and assignee = ${fixtures.assigneeId} and due < today+30d`,
          )}`,
        }),
      ],
    },
    searchSelective: {
      name: 'search, selective (a task number)',
      headers: big,
      steps: [() => ({ method: 'GET', path: selectiveSearch })],
    },
    // Four verbs of the seed's twelve: a third of the titles.
    searchBroad: {
      name: 'search, broad (a third of the project)',
      headers: big,
      steps: [() => ({ method: 'GET', path: broadSearch })],
    },
    searchRelevance: {
      name: `search + sort=relevance (${fixtures.searchWord}, about 5 %)`,
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks?search=${fixtures.searchWord}&sort=relevance` })],
    },
    // The backlog order (issue 26): its first page, and a deep one by its keyset cursor (a rank).
    listRank: { name: 'list, sort=rank default page', headers: big, steps: [() => ({ method: 'GET', path: '/api/v1/tasks?sort=rank' })] },
    listRankDeep: {
      name: `list, sort=rank page ${fixtures.deepPage} by cursor`,
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks?sort=rank&limit=50&cursor=${fixtures.rankDeepCursor}` })],
    },
    listRankBeforeDeep: {
      name: 'sort=rank page before the deep one',
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks?sort=rank&limit=50&cursor=${fixtures.rankCursorBeforeDeep}` })],
    },
    // Sprint reports (issue 26), of the big project's active sprint: computed from its ledger at each request.
    sprintReport: {
      name: `sprint report, ${count(sprint.scope)} tasks, ${count(sprint.ledgerRows)} ledger rows`,
      headers: big,
      connections: REPORT_CONNECTIONS,
      steps: [() => ({ method: 'GET', path: `/api/v1/sprints/${sprint.id}/report` })],
      async prepare(baseUrl) {
        const answer = await fetchJson(baseUrl, this, this.steps[0]());
        const scope = answer.body?.report?.scope?.tasks;
        if (answer.status !== 200 || scope !== sprint.scope)
          throw new Error(`the report answered ${answer.status} with a scope of ${scope} tasks, not ${sprint.scope}: ${answer.text.slice(0, 300)}`);
      },
    },
    sprintBurndown: {
      name: 'sprint burndown, the same sprint',
      headers: big,
      connections: REPORT_CONNECTIONS,
      steps: [() => ({ method: 'GET', path: `/api/v1/sprints/${sprint.id}/burndown` })],
    },
    velocity: {
      name: 'velocity, last 6 closed sprints',
      headers: big,
      connections: REPORT_CONNECTIONS,
      steps: [() => ({ method: 'GET', path: '/api/v1/reports/velocity' })],
      async prepare(baseUrl) {
        const answer = await fetchJson(baseUrl, this, this.steps[0]());
        if (answer.status !== 200 || answer.body?.sprints?.length !== 6)
          throw new Error(`velocity answered ${answer.status} with ${answer.body?.sprints?.length} sprints, not 6: ${answer.text.slice(0, 300)}`);
      },
    },
    // Issue 37: a task's comment list, its first page and a deep one by its keyset cursor.
    commentsFirst: {
      // (`?.`: a tree before comments has none, and ab.js builds these rows for it too, unused.)
      name: `comments, first page of a task with ${count(fixtures.comments?.total ?? 0)} comments`,
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks/${fixtures.comments.taskId}/comments` })],
      async prepare(baseUrl) {
        const answer = await fetchJson(baseUrl, this, this.steps[0]());
        if (answer.status !== 200 || answer.body?.comments?.length !== 50 || answer.body.total !== fixtures.comments.total)
          throw new Error(`the comment list answered ${answer.status} with ${answer.body?.comments?.length} comments of ${answer.body?.total}`);
      },
    },
    commentsDeep: {
      name: `comments, page ${fixtures.comments?.deepPage} of it by cursor`,
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks/${fixtures.comments.taskId}/comments?limit=50&cursor=${fixtures.comments.deepCursor}` })],
      /** The service's own cursor after the page before must be the one the harness signed, and the deep page full. */
      async prepare(baseUrl) {
        const path = `/api/v1/tasks/${fixtures.comments.taskId}/comments?limit=50&cursor=${fixtures.comments.cursorBeforeDeep}`;
        const before = await fetchJson(baseUrl, this, { method: 'GET', path });
        if (before.body?.nextCursor !== fixtures.comments.deepCursor)
          throw new Error(
            `the service's cursor after page ${fixtures.comments.deepPage - 1} is not the one the harness signed: ${before.text.slice(0, 300)}`,
          );
        const answer = await fetchJson(baseUrl, this, this.steps[0]());
        if (answer.status !== 200 || answer.body?.comments?.length !== 50)
          throw new Error(`page ${fixtures.comments.deepPage} answered ${answer.status} with ${answer.body?.comments?.length} comments`);
      },
    },
    detail: {
      name: 'detail, task with dependencies',
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks/${fixtures.withDependencies[detailCount++ % fixtures.withDependencies.length]}` })],
    },
    create: { name: 'create (small project)', headers: writer, steps: [create(fixtures.writer)] },
    // Issue 37: a comment with a mention, on one of 200 tasks of the same small project as the create row.
    commentCreate: {
      name: 'create a comment (small project, with a mention)',
      headers: writer,
      steps: [
        () => {
          const n = commentCount++;
          const { writerTasks } = fixtures.comments;
          const member = fixtures.writer.members[n % fixtures.writer.members.length];
          const body = `Bench comment ${n}: reproduced on staging, the log is in the ticket. <@${member}> can you confirm?`;
          return { method: 'POST', path: `/api/v1/tasks/${writerTasks[n % writerTasks.length]}/comments`, body: { body } };
        },
      ],
    },
    // The same create with a new Idempotency-Key each time: the stored answer joins the write.
    createKeyed: {
      name: 'create with Idempotency-Key',
      headers: writer,
      ok: [201],
      steps: [() => ({ ...create(fixtures.writer)(), headers: { 'idempotency-key': `bench-${run}-create-${createCount}` } })],
    },
    // A retried create: the same key and body again, answered from the stored answer (201 with
    // Idempotent-Replayed: true). Not one key for all connections: a key busy with another
    // replay is answered by a shorter path (a look-up outside any transaction), and a retry
    // rarely meets its twin. So prepare() creates 2 x connections keys (same body), and a
    // request takes a key no other request holds and gives it back when answered, as the
    // delete + restore row does with its tasks (a request cut off at the end of the warm-up
    // never gives its key back: it may still be running in the service).
    createReplay: {
      name: 'create replayed (same Idempotency-Key and body)',
      headers: writer,
      ok: [201],
      steps: [
        (ctx) => {
          ctx.key = replayKeys.shift();
          return { method: 'POST', path: '/api/v1/tasks', body: replayBody, headers: { 'idempotency-key': ctx.key } };
        },
      ],
      done(ctx) {
        replayKeys.push(ctx.key);
      },
      async prepare(baseUrl) {
        replayKeys = Array.from({ length: 2 * connections }, (_, i) => `bench-${run}-replay-${i}`);
        for (const [i, key] of replayKeys.entries()) {
          const step = { method: 'POST', path: '/api/v1/tasks', body: replayBody, headers: { 'idempotency-key': key } };
          const first = await fetchJson(baseUrl, this, step);
          if (first.status !== 201) throw new Error(`the first POST with its key answered ${first.status}: ${first.text.slice(0, 300)}`);
          if (i > 0) continue;
          const again = await fetchJson(baseUrl, this, step);
          if (again.status !== 201 || again.headers['idempotent-replayed'] !== 'true' || again.text !== first.text) {
            throw new Error(
              `the replay answered ${again.status}, Idempotent-Replayed ${again.headers['idempotent-replayed']}, same body: ${again.text === first.text}`,
            );
          }
        }
      },
    },
    // The create in the project with one webhook on every event: the outbox row joins the
    // write, and the service's worker delivers (to bench/receiver.js) while the row runs.
    createWithWebhook: {
      name: 'create with a webhook (small project)',
      headers: auth(hookedKey),
      steps: [create(fixtures.hooked)],
    },
    bulkCreate: {
      name: `bulk create, ${BULK_SIZE} tasks`,
      headers: writer,
      perRequest: BULK_SIZE,
      // Importers, not a crowd; and with 32 requests of 100 tasks queued at once, a request
      // waits longer than a quick row lasts, and too few answers fall in the row to count.
      connections: BULK_CONNECTIONS,
      steps: [
        () => {
          const n = bulkCount++;
          const tasks = Array.from({ length: BULK_SIZE }, (_, i) => ({ ...createBody(fixtures.writer, i), title: `Bench bulk ${n} task ${i}` }));
          return { method: 'POST', path: '/api/v1/tasks/bulk', body: { tasks } };
        },
      ],
    },
    // The polling board: the default list again with the ETag it answered, 304 every time.
    listNotModified: {
      name: 'list, default page, If-None-Match (304)',
      headers: big,
      ok: [304],
      steps: [() => ({ method: 'GET', path: '/api/v1/tasks', headers: { 'if-none-match': listTag } })],
      async prepare(baseUrl) {
        const answer = await fetchJson(baseUrl, this, { method: 'GET', path: '/api/v1/tasks' });
        listTag = answer.headers.etag;
        if (answer.status !== 200 || !listTag) throw new Error(`GET /api/v1/tasks answered ${answer.status} with ETag ${listTag}`);
        const again = await fetchJson(baseUrl, this, this.steps[0]());
        if (again.status !== 304) throw new Error(`the same GET with If-None-Match answered ${again.status}`);
      },
    },
    // The change feed: FEED_LIMIT events of the writer project, always the same ones.
    feed100: {
      name: `feed, ${FEED_LIMIT} events`,
      headers: writer,
      steps: [() => ({ method: 'GET', path: `/api/v1/events?after=${feedAfter}&limit=${FEED_LIMIT}` })],
      /** Makes FEED_LIMIT events if the project has fewer (one bulk create), and reads the last FEED_LIMIT. */
      async prepare(baseUrl) {
        const last = async () => {
          let after = 0;
          for (;;) {
            const page = await fetchJson(baseUrl, this, { method: 'GET', path: `/api/v1/events?after=${after}&limit=1000` });
            if (page.status !== 200) throw new Error(`GET /api/v1/events answered ${page.status}: ${page.text.slice(0, 300)}`);
            after = page.body.nextAfter;
            if (!page.body.hasMore) return after;
          }
        };
        let sequence = await last();
        if (sequence < FEED_LIMIT) {
          const body = { tasks: Array.from({ length: FEED_LIMIT }, (_, i) => createBody(fixtures.writer, i)) };
          const made = await fetchJson(baseUrl, this, { method: 'POST', path: '/api/v1/tasks/bulk', body });
          if (made.status !== 201) throw new Error(`the bulk create that makes the events answered ${made.status}: ${made.text.slice(0, 300)}`);
          sequence = await last();
        }
        feedAfter = sequence - FEED_LIMIT;
        const answer = await fetchJson(baseUrl, this, this.steps[0]());
        if (answer.status !== 200 || answer.body.events?.length !== FEED_LIMIT) {
          throw new Error(
            `GET /api/v1/events?after=${feedAfter}&limit=${FEED_LIMIT} answered ${answer.status} with ${answer.body?.events?.length} events`,
          );
        }
      },
    },
    // One task in four of the active sprint, whose re-estimates write the sprint ledger.
    patch: {
      name: 'patch (title + priority + estimate)',
      headers: big,
      steps: [
        () => {
          const n = patchCount++;
          const id = fixtures.patchable[n % fixtures.patchable.length];
          // A new title every time, so every patch writes (and records history).
          const body = { title: `Bench patch ${n}`, priority: PRIORITIES[n % PRIORITIES.length], estimate: ESTIMATES[n % ESTIMATES.length] };
          return { method: 'PATCH', path: `/api/v1/tasks/${id}`, body };
        },
      ],
    },
    // A backlog move: a task placed right before or after another, both anywhere in the order.
    move: {
      name: 'move (a task before or after another)',
      headers: big,
      steps: [
        (ctx) => {
          const n = moveCount++;
          [ctx.task, ctx.anchor] = [movable.shift(), movable.shift()];
          const body = n % 2 === 0 ? { before: ctx.anchor } : { after: ctx.anchor };
          return { method: 'POST', path: `/api/v1/tasks/${ctx.task}/move`, body };
        },
      ],
      done(ctx) {
        movable.push(ctx.anchor, ctx.task);
      },
    },
    // The list when the service cannot reuse anything: each iteration changes a task of the
    // project, then reads the default page, which must then be read and counted again.
    patchList: {
      name: 'patch + list (the page read again after each change)',
      headers: big,
      steps: [patchTitle, () => ({ method: 'GET', path: '/api/v1/tasks' })],
    },
    // Issue 38's searches right after a change, which no remembered page answers: each iteration
    // changes a task's title, then searches (the total is brought up to date from the changed row,
    // or counted again after a comment: TaskReader.readPage).
    patchSearchSelective: {
      name: 'patch + selective search (a task number)',
      headers: big,
      steps: [patchTitle, () => ({ method: 'GET', path: selectiveSearch })],
    },
    patchSearchBroad: {
      name: 'patch + broad search (a third of the project)',
      headers: big,
      steps: [patchTitle, () => ({ method: 'GET', path: broadSearch })],
    },
    // The filtered list after a change that alters its answer: the title of a task on its page
    // changes (and still holds the search word, so the task stays on the page).
    patchListFiltered: {
      name: 'patch + filtered list (a task on the page changed)',
      headers: big,
      steps: [
        () => {
          const n = patchCount++;
          const id = filteredTasks[n % filteredTasks.length];
          return { method: 'PATCH', path: `/api/v1/tasks/${id}`, body: { title: `Bench patch of a ${fixtures.searchWord} task ${n}` } };
        },
        () => ({ method: 'GET', path: filtered }),
      ],
      /** The tasks on the filtered page now (earlier patches may have taken some off it). */
      async prepare(baseUrl) {
        const answer = await fetchJson(baseUrl, this, { method: 'GET', path: filtered });
        filteredTasks = answer.body?.tasks?.map((task) => task.id) ?? [];
        if (answer.status !== 200 || !filteredTasks.length)
          throw new Error(`the filtered list answered ${answer.status} with ${filteredTasks.length} tasks`);
      },
    },
    // Issue 35: the close of an active sprint of CLOSE_SCOPE open tasks, which it carries over to
    // a planned sprint (its moves, its ledger rows, its frozen report), then that sprint's
    // activation (its scope committed), so that the next iteration closes it in turn. One
    // connection: a project has one active sprint. The figures are of the two requests.
    sprintClose: {
      name: `sprint close of ${count(CLOSE_SCOPE)} open tasks carried over, + the next one's activation`,
      headers: auth(closerKey),
      connections: 1,
      // The next sprint is looked at, not taken, until its activation answered: autocannon may
      // build a request more than once.
      steps: [
        () => ({
          method: 'POST',
          path: `/admin/v1/sprints/${activeSprint}/close`,
          body: { moveOpenTasksTo: plannedSprints[0] },
          headers: admin,
        }),
        () => ({ method: 'POST', path: `/admin/v1/sprints/${plannedSprints[0]}/activate`, headers: admin }),
      ],
      done(ctx, ok, step) {
        if (ok && step === 1) activeSprint = plannedSprints.shift();
      },
      /**
       * In the closer project: its active sprint closed (its open tasks to no sprint), a new one
       * activated and given CLOSE_SCOPE new open tasks, and CLOSE_POOL planned sprints.
       */
      async prepare(baseUrl) {
        if (!closerKey || !adminToken) throw new Error('the close row needs closerKey and adminToken (npm run bench:ab passes them)');
        const newSprint = async (name) => (await closerCall(baseUrl, { method: 'POST', path: '/api/v1/sprints', body: { name } })).sprint.id;
        const { sprints } = await closerCall(baseUrl, { method: 'GET', path: '/api/v1/sprints' });
        for (const sprint of sprints.filter((s) => s.status === 'active')) {
          await closerCall(baseUrl, { method: 'POST', path: `/admin/v1/sprints/${sprint.id}/close`, body: {}, headers: admin });
        }
        activeSprint = await newSprint(`Bench close ${run}`);
        await closerCall(baseUrl, { method: 'POST', path: `/admin/v1/sprints/${activeSprint}/activate`, headers: admin });
        for (let made = 0; made < CLOSE_SCOPE; made += BULK_SIZE) {
          const tasks = Array.from({ length: Math.min(BULK_SIZE, CLOSE_SCOPE - made) }, (_, i) => ({
            title: `Bench close task ${made + i}`,
            status: 'todo',
            estimate: ESTIMATES[i % ESTIMATES.length],
            sprintId: activeSprint,
          }));
          await closerCall(baseUrl, { method: 'POST', path: '/api/v1/tasks/bulk', body: { tasks } });
        }
        plannedSprints = [];
        for (let i = 0; i < CLOSE_POOL; i++) plannedSprints.push(await newSprint(`Bench close ${run} ${i}`));
      },
      /**
       * Before each measured run (bench:ab): a run cut off between a close and its activation
       * (the row's time was up) left no active sprint; the sprint that holds the tasks is then
       * activated here, outside the measurement.
       */
      async settle(baseUrl) {
        const { sprints } = await closerCall(baseUrl, { method: 'GET', path: '/api/v1/sprints' });
        const status = new Map(sprints.map((sprint) => [sprint.id, sprint.status]));
        if (status.get(activeSprint) === 'active') return;
        if (status.get(plannedSprints[0]) === 'planned') {
          await closerCall(baseUrl, { method: 'POST', path: `/admin/v1/sprints/${plannedSprints[0]}/activate`, headers: admin });
        }
        activeSprint = plannedSprints.shift();
      },
    },
    deleteRestore: {
      name: 'delete + restore',
      headers: big,
      steps: [
        (ctx) => {
          ctx.id = pool.shift();
          taken.add(ctx.id);
          return { method: 'DELETE', path: `/api/v1/tasks/${ctx.id}` };
        },
        (ctx) => ({ method: 'POST', path: `/api/v1/trash/${ctx.id}/restore` }),
      ],
      done(ctx, ok, step) {
        if (ok && step === 1) {
          taken.delete(ctx.id);
          pool.push(ctx.id);
        }
      },
      /** Ids a stopped run may have left in the trash (run.js restores them). */
      leftInTrash: () => [...taken],
    },
  };
}

module.exports = { scenarios, BULK_SIZE, FEED_LIMIT };
