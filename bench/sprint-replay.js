'use strict';
// The sprints' lives, for the seed: each sprint with a ledger (the active one, and the last
// REPORTED_SPRINTS closed ones) is activated, lived through in rounds of changes to its tasks, and
// closed, with the service's own statements (sprintLedger and the frozen report of
// dist/sprints/sprint-ledger.sql.js, as ChangeLog.record sends them), so that the ledger and the
// reports are what the service itself would have written, not a second copy of its rules.
//
// The lives are played on a narrow copy of the sprint's tasks and of the sprint (temporary tables
// named `tasks` and `sprints`, which the service's unqualified statements then read in this
// session instead of the real ones), so that the real tasks are never rewritten: rewriting them
// round after round would leave the task table several times its size in dead rows and its rows
// out of creation order, and the list rows would measure that. The copy starts from the tasks as
// seeded (their final state) and ends there (the active sprint) or at the state the close saw
// (closed sprints: their done tasks may have been reopened since, as happens).
//
// Who is in a sprint's life (per task, from hashes of its id, so every run is the same):
// - its tasks (sprint_id = the sprint): committed at activation, but 10 % added during the
//   sprint and 3 % trashed and restored during it;
// - tasks of the next sprint, as many as 6 % of its own: committed here, then moved to the next
//   sprint during it (removed); and, for a closed sprint, as many as 12 % of its own: committed
//   here, still open at the close, which carries them over to the next sprint.
// Each round, a share of the tasks in the life change status or estimate; the last round brings
// each task to its final state (for a closed sprint: done or cancelled, or open if carried over).

const path = require('node:path');

const DIST = path.resolve(__dirname, '../dist');

const STATUSES = ['todo', 'in_progress', 'in_review', 'done', 'in_progress'];
const ESTIMATES = [0.5, 1, 2, 3, 5, 8, 13];

/** Rounds of changes in the life of the active sprint (since its activation, 3 days ago) and of a closed one (2 weeks). */
const ACTIVE_ROUNDS = 24;
const CLOSED_ROUNDS = 6;
/** Percent of the tasks that change status or estimate in a round: the active sprint's ledger reaches about 10 rows per task. */
const ACTIVE_CHANGE_PERCENT = 45;
const CLOSED_CHANGE_PERCENT = 30;

/** Of a sprint's own tasks: those added during its life (a hash of the id, out of 100, in this range), and those trashed and restored. */
const ADDED = [18, 27];
const TRASHED_PERCENT = 3;
/** As many tasks as this share of its own tasks were also in it and moved to the next sprint during its life (removed), or at its close (carried over). */
const REMOVED_PERCENT = 6;
const CARRIED_PERCENT = 12;

const hash = (salt) => `abs(hashtextextended(t.id::text, ${salt}))`;

/**
 * Replays the lives of the sprints `first` to `active` (the active one, last) of `projectId`, in
 * order, on `session` (SqlSession of dist/database/database-engine.js); sprint s's id is
 * `sprintId(s)`. Each sprint in a transaction of its own.
 */
async function replaySprints(session, { projectId, sprintId, first, active }) {
  for (let s = first; s <= active; s++) {
    await session.exec('BEGIN');
    try {
      await replaySprint(session, {
        projectId,
        sprint: sprintId(s),
        next: sprintId(s + 1),
        closes: s < active,
      });
      await session.exec('COMMIT');
    } catch (error) {
      await session.exec('ROLLBACK');
      throw error;
    }
  }
}

async function replaySprint(session, { projectId, sprint, next, closes }) {
  const { sprintLedger } = require(path.join(DIST, 'sprints/sprint-ledger.sql.js'));
  const { CHANGE_TIME_SETTING, CHANGE_TIME } = require(path.join(DIST, 'changes/change.js'));
  const changeTime = CHANGE_TIME.text ?? CHANGE_TIME.sql;
  const rounds = closes ? CLOSED_ROUNDS : ACTIVE_ROUNDS;
  const percent = closes ? CLOSED_CHANGE_PERCENT : ACTIVE_CHANGE_PERCENT;
  const run = async (statement) => session.query(statement.text, statement.values);
  /** Brings the ledger up to date with a change of `records`, as ChangeLog.record does after the change's writes. */
  const record = async (records) => {
    for (const statement of sprintLedger({ projectId, actor: 'App', records })) await run(statement);
  };
  /** The change's time: round `r` of `rounds + 1` between activation (0) and close, or an hour ago for the active sprint. */
  const at = (r) =>
    session.query(
      `SELECT set_config($3::text, date_trunc('milliseconds', s.activated_at + $1::int * (COALESCE(s.closed_at, now() - interval '1 hour') - s.activated_at) / $2::int)::text, true)
         FROM sprints s`,
      [r, rounds + 1, CHANGE_TIME_SETTING],
    );

  // The sprint, active, as it was during its life.
  // (With its primary key: the report groups by the sprint's id alone.)
  await session.exec(`CREATE TEMP TABLE sprints (LIKE public.sprints INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`);
  await session.query(`INSERT INTO sprints SELECT * FROM public.sprints WHERE id = $1::uuid`, [sprint]);
  await session.exec(`UPDATE sprints SET status = 'active', report = NULL`);
  // Who was in the next sprint's place in this one (see the top): as many as REMOVED_PERCENT and
  // CARRIED_PERCENT of this sprint's own tasks, taken from those of the next sprint that were not
  // added to it during its own life (they were in no sprint until then).
  const candidate = `t.sprint_id = $3::uuid AND ${hash(1)} % 100 NOT BETWEEN ${ADDED[0]} AND ${ADDED[1]}`;
  const [{ own, candidates }] = await session.query(
    `SELECT count(*) FILTER (WHERE t.sprint_id = $2::uuid)::int AS own, count(*) FILTER (WHERE ${candidate})::int AS candidates
       FROM public.tasks t WHERE t.project_id = $1::uuid AND t.sprint_id IN ($2::uuid, $3::uuid)`,
    [projectId, sprint, next],
  );
  // Thresholds out of 10 000 on a hash of the candidate's id.
  const share = (percent) => Math.min(10_000, Math.round((100 * percent * own) / Math.max(1, candidates)));
  const removedBelow = share(REMOVED_PERCENT);
  const carriedBelow = closes ? Math.min(10_000, removedBelow + share(CARRIED_PERCENT)) : removedBelow;
  // Its tasks' life: their role, the round of their move (or trash), their state at activation and at the end.
  const finished = `t.status IN ('done', 'cancelled')`;
  await session.query(
    `CREATE TEMP TABLE tasks AS
     SELECT x.*,
            CASE WHEN x.role = 'added' THEN NULL ELSE $2::uuid END AS sprint_id,
            NULL::timestamptz AS deleted_at,
            (ARRAY['todo', 'todo', 'todo', 'in_progress', 'backlog'])[1 + x.h % 5]::task_status AS status,
            CASE WHEN x.h % 3 = 0 THEN (ARRAY[NULL, ${ESTIMATES.join(', ')}]::numeric[])[1 + x.h % ${ESTIMATES.length + 1}] ELSE x.end_estimate END AS estimate,
            1 + x.h % ${rounds - 1} AS move_round,
            2 + x.h % ${rounds - 2} AS restore_round
       FROM (SELECT t.id, t.project_id, t.title, t.rank, ${hash(7)} AS h,
                    CASE WHEN t.sprint_id = $3::uuid AND ${hash(8)} % 10000 < $4::int THEN 'removed'
                         WHEN t.sprint_id = $3::uuid THEN 'carried'
                         WHEN ${hash(1)} % 100 BETWEEN ${ADDED[0]} AND ${ADDED[1]} THEN 'added'
                         WHEN ${hash(2)} % 100 < ${TRASHED_PERCENT} THEN 'trashed'
                         ELSE 'member' END AS role,
                    CASE WHEN NOT $6::boolean THEN t.status
                         WHEN t.sprint_id = $3::uuid THEN CASE WHEN ${finished} THEN 'in_progress' ELSE t.status END
                         ELSE CASE WHEN ${finished} THEN t.status ELSE 'done' END END::task_status AS end_status,
                    t.estimate AS end_estimate
               FROM public.tasks t
              WHERE t.project_id = $1::uuid AND (t.sprint_id = $2::uuid OR (${candidate} AND ${hash(8)} % 10000 < $5::int))) x`,
    [projectId, sprint, next, removedBelow, carriedBelow, closes],
  );
  // Its primary key, as the real table has: the service's statements find tasks by id (the
  // report's lateral join, task by task), and without it each look-up scans the whole copy.
  await session.exec(`ALTER TABLE tasks ADD PRIMARY KEY (id)`);
  await session.exec(`ANALYZE tasks`);

  // Activation: the committed scope.
  await at(0);
  await record([{ sprint, action: 'activated' }]);

  // The rounds: moves in and out, trash and restore, status changes and re-estimates; the last
  // brings every task to its end state.
  for (let r = 1; r <= rounds; r++) {
    await at(r);
    const acts = `${hash(`1000 + ${r}`)} % 100 < ${percent}`;
    const changed = await session.query(
      `UPDATE tasks t SET
         sprint_id = CASE WHEN t.move_round = $1::int AND t.role = 'added' THEN $3::uuid
                          WHEN t.move_round = $1::int AND t.role = 'removed' THEN $4::uuid ELSE t.sprint_id END,
         deleted_at = CASE WHEN t.role = 'trashed' AND t.move_round = $1::int AND t.restore_round > $1::int THEN ${changeTime}
                           WHEN t.role = 'trashed' AND t.restore_round = $1::int THEN NULL ELSE t.deleted_at END,
         status = CASE WHEN $1::int = $2::int THEN t.end_status
                       WHEN ${acts} AND ${hash(`2000 + ${r}`)} % 10 < 6 THEN (ARRAY['${STATUSES.join("', '")}'])[1 + ${hash(`3000 + ${r}`)} % ${STATUSES.length}]::task_status
                       ELSE t.status END,
         estimate = CASE WHEN $1::int = $2::int THEN t.end_estimate
                         WHEN ${acts} AND ${hash(`2000 + ${r}`)} % 10 >= 6 THEN (ARRAY[${ESTIMATES.join(', ')}]::numeric[])[1 + ${hash(`3000 + ${r}`)} % ${ESTIMATES.length}]
                         ELSE t.estimate END
       WHERE $1::int = $2::int OR ${acts} OR t.move_round = $1::int OR t.restore_round = $1::int
       RETURNING t.id::text`,
      [r, rounds, sprint, next],
    );
    if (changed.length) await record(changed.map(({ id }) => ({ task: id, action: 'updated' })));
  }

  if (closes) {
    // The close, as SprintsService.close writes it: the open live tasks move to the next sprint,
    // the sprint is closed, the ledger notes who left with the close, and the report is frozen.
    await at(rounds + 1);
    const moved = await session.query(
      `UPDATE tasks SET sprint_id = $2::uuid
        WHERE sprint_id = $1::uuid AND deleted_at IS NULL AND status NOT IN ('done', 'cancelled')
        RETURNING id::text`,
      [sprint, next],
    );
    await session.exec(`UPDATE sprints SET status = 'closed'`);
    await record([...moved.map(({ id }) => ({ task: id, action: 'updated' })), { sprint, action: 'closed' }]);
    await session.exec(`UPDATE public.sprints p SET report = s.report, closed_tallies = s.closed_tallies FROM sprints s WHERE p.id = s.id`);
  }
  await session.exec('DROP TABLE tasks, sprints');
}

module.exports = { replaySprints };
