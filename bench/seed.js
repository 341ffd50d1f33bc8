'use strict';
// Bulk seeding straight into the tables of prisma/schema.prisma (snake_case columns).
//
// Every value is a function of the row number, through hashint8extended(i, salt): the same
// run size always gives the same data (ids excepted where PostgreSQL draws them), so two
// runs measure the same thing. Ids are md5(...)::uuid, which lets a task name its parent,
// blockers and labels by arithmetic instead of joins.
//
// One INSERT ... SELECT FROM generate_series per table and project: about 100k tasks per
// few seconds on PostgreSQL, instead of one HTTP call per task.

const { createHash, randomBytes } = require('node:crypto');
const { replaySprints } = require('./sprint-replay');

const MEMBERS = 20;
const LABELS = 30;
const SPRINTS = 50;
/** The sprint that is active today; the ones before it are closed, the ones after planned. */
const ACTIVE_SPRINT = 40;
/** Tasks in the big project's active sprint, whatever its size: the sprint report row reads them (sprint-replay.js). */
const ACTIVE_SCOPE = 1000;
/**
 * The closed sprints with a ledger and a frozen report: the last REPORTED_SPRINTS before the active
 * one. The earlier ones were closed before the service kept a ledger (as in a database that went
 * through migration sprint_ledger): no report, no activatedAt and closedAt, and velocity skips them.
 */
const REPORTED_SPRINTS = 12;
/** Estimates as teams give them (Fibonacci-like points), some repeated: the common ones weigh more. */
const ESTIMATES = [1, 2, 3, 5, 8, 13, 0.5, 1, 2, 3, 5, 3];
/** Ranks as src/tasks/task-ranks.ts writes them: 16 hex digits; creates start at 2^62, spaced 2^32. */
const RANK_BASE = '4611686018427387904';
const RANK_GAP = '4294967296';
const PERMISSIONS = ['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage', 'webhooks:manage', 'comments:write', 'content:moderate'];
/** The big project's task with COMMENTS_ON_ONE_TASK comments, which the comment list rows page through (a root task: i % 10 = 2). */
const COMMENTED_TASK = 2;
const COMMENTS_ON_ONE_TASK = 10_000;

const MEMBER_NAMES = [
  'Ada Lovelace',
  'Grace Hopper',
  'Alan Turing',
  'Barbara Liskov',
  'Edsger Dijkstra',
  'Donald Knuth',
  'Margaret Hamilton',
  'Ken Thompson',
  'Dennis Ritchie',
  'Frances Allen',
  'John McCarthy',
  'Radia Perlman',
  'Tony Hoare',
  'Leslie Lamport',
  'Barbara Cooper',
  'Niklaus Wirth',
  'Adele Goldberg',
  'Butler Lampson',
  'Shafi Goldwasser',
  'Jim Gray',
];
const LABEL_NAMES = [
  'bug',
  'feature',
  'docs',
  'chore',
  'refactor',
  'performance',
  'security',
  'ux',
  'design',
  'backend',
  'frontend',
  'api',
  'database',
  'infra',
  'ci',
  'testing',
  'mobile',
  'accessibility',
  'i18n',
  'analytics',
  'billing',
  'auth',
  'search',
  'notifications',
  'onboarding',
  'tech-debt',
  'customer',
  'regression',
  'spike',
  'good-first-issue',
];
// Titles are "<verb> <object> <n>". One object of twenty contains "login", so `q=login` matches
// about 5 % of the tasks: the filtered list row searches for it.
const VERBS = ['Fix', 'Add', 'Update', 'Remove', 'Refactor', 'Document', 'Investigate', 'Improve', 'Test', 'Migrate', 'Review', 'Design'];
const OBJECTS = [
  'login redirect',
  'checkout flow',
  'search index',
  'billing export',
  'user settings page',
  'email templates',
  'API rate limits',
  'dashboard charts',
  'CSV import',
  'mobile navigation',
  'audit log',
  'password reset',
  'notification centre',
  'sprint board',
  'file uploads',
  'dark mode',
  'onboarding wizard',
  'webhooks',
  'permissions model',
  'report scheduler',
];
/**
 * The word of the filtered list row (trigram search needs 3 characters or more), and of the
 * search rows with sort=relevance (about 5 % of the tasks, in their titles).
 */
const SEARCH_WORD = 'login';

/** sha256 hex of the whole secret, prefix = its first 12 characters (src/auth/api-keys.ts). */
function newApiKey() {
  const secret = 'tsk_' + randomBytes(32).toString('base64url');
  return { secret, prefix: secret.slice(0, 12), secretHash: createHash('sha256').update(secret).digest('hex') };
}

const sqlText = (value) => `'${String(value).replace(/'/g, "''")}'`;
const sqlArray = (values) => `ARRAY[${values.map(sqlText).join(', ')}]`;

/**
 * The script that seeds one project: its members, labels, sprints, key, tasks (with
 * subtasks, labels, dependencies and a `created` history entry each).
 * `p` numbers the project (0 is the big one); `n` is its task count.
 */
function projectScript(p, n, key) {
  const id = (kind, i) => `md5('bench:${p}:${kind}:' || (${i}))::uuid`;
  const h = (salt) => `(abs(hashint8extended(g.i, ${p * 100 + salt})) % 1000000)::int`;
  const hi = (salt) => h(salt).replace('g.i', 'i');
  const moved = `${hi(22)} % 5 = 0`;
  // Every activeStep-th task is in the active sprint: ACTIVE_SCOPE of them in the big project, about 1.25 % in the others.
  const activeStep = p === 0 ? Math.max(10, Math.floor(n / ACTIVE_SCOPE)) : 80;
  // Created over the past year, oldest first; every 200th task shares the timestamp of the
  // one before it (equal created_at values happen, and the keyset must order them by id).
  const k = `(g.i - (g.i % 200 = 0)::int)`;
  const stepMs = Math.floor((365 * 86_400_000) / n);
  const createdAt = `(date_trunc('day', now()) - interval '365 days' + (${k}::bigint * ${stepMs} + abs(hashint8extended(${k}, ${p * 100 + 99})) % ${Math.max(1, Math.floor(stepMs / 2))}) * interval '1 millisecond')`;
  return `
INSERT INTO projects (id, name, created_at)
VALUES (${id('project', 0)}, ${sqlText(p === 0 ? 'Bench big project' : `Bench project ${p}`)}, now() - interval '400 days');

INSERT INTO memberships (id, project_id, name, created_at)
SELECT ${id('member', 'm')}, ${id('project', 0)}, (${sqlArray(MEMBER_NAMES)})[m], now() - interval '400 days' + m * interval '1 day'
  FROM generate_series(1, ${MEMBERS}) m;

INSERT INTO labels (id, project_id, name, color, created_at)
SELECT ${id('label', 'l')}, ${id('project', 0)}, (${sqlArray(LABEL_NAMES)})[l], '#' || substr(md5('color' || l), 1, 6),
       now() - interval '400 days' + l * interval '1 hour'
  FROM generate_series(1, ${LABELS}) l;

-- Two-week sprints: ${ACTIVE_SPRINT - 1} closed, sprint ${ACTIVE_SPRINT} active (it holds today), the rest planned.
-- The app activated each at 09:00 on its first day and closed it at 17:00 on its last (Madrid),
-- as the last ${REPORTED_SPRINTS} closed and the active one record it; the earlier ones were closed
-- before the ledger existed. Their reports are frozen by sprint-replay.js.
INSERT INTO sprints (id, project_id, name, goal, status, start_date, end_date, created_at, updated_at, activated_at, closed_at)
SELECT ${id('sprint', 's')}, ${id('project', 0)}, 'Sprint ' || s, CASE WHEN s % 3 = 0 THEN 'Ship the ' || s || 'th increment' END,
       (CASE WHEN s < ${ACTIVE_SPRINT} THEN 'closed' WHEN s = ${ACTIVE_SPRINT} THEN 'active' ELSE 'planned' END)::sprint_status,
       current_date + (s - ${ACTIVE_SPRINT}) * 14 - 3, current_date + (s - ${ACTIVE_SPRINT}) * 14 + 10,
       now() - interval '400 days' + s * interval '7 days', now() - interval '400 days' + s * interval '7 days',
       CASE WHEN s BETWEEN ${ACTIVE_SPRINT - REPORTED_SPRINTS} AND ${ACTIVE_SPRINT}
            THEN ((current_date + (s - ${ACTIVE_SPRINT}) * 14 - 3) + time '09:00') AT TIME ZONE 'Europe/Madrid' END,
       CASE WHEN s BETWEEN ${ACTIVE_SPRINT - REPORTED_SPRINTS} AND ${ACTIVE_SPRINT - 1}
            THEN ((current_date + (s - ${ACTIVE_SPRINT}) * 14 + 10) + time '17:00') AT TIME ZONE 'Europe/Madrid' END
  FROM generate_series(1, ${SPRINTS}) s;

INSERT INTO api_keys (project_id, name, prefix, secret_hash, permissions, created_at)
VALUES (${id('project', 0)}, 'Bench key', ${sqlText(key.prefix)}, ${sqlText(key.secretHash)}, ${sqlArray(PERMISSIONS)}::text[], now() - interval '1 day');

-- Tasks. Task i is a subtask when i % 10 = 5 (10 %); its parent is an earlier task with
-- i % 10 = 4, never a subtask itself (subtasks have one level only). The active sprint holds the
-- tasks with i % ${activeStep} = 7 (${Math.floor(n / activeStep)}); 60 % of the others are in one of the other sprints.
-- The backlog order (rank): creation order, oldest at the top, but for one task in five, moved
-- since to a place nearer the top, in a gap narrower than a create leaves (2^32 halved 0 to 19
-- times), as moves leave them; below 2^62, where the ranks of new tasks start.
INSERT INTO tasks (id, project_id, title, description, status, priority, parent_id, assignee_id, sprint_id,
                   due_date, completed_at, created_at, updated_at, estimate, rank)
SELECT ${id('task', 'g.i')}, ${id('project', 0)},
       (${sqlArray(VERBS)})[1 + ${h(1)} % ${VERBS.length}] || ' ' || (${sqlArray(OBJECTS)})[1 + ${h(2)} % ${OBJECTS.length}] || ' ' || g.i,
       CASE WHEN ${h(3)} % 2 = 0 THEN 'Steps to reproduce: open the page, do the thing, see the result. '
            || 'Expected the documented behaviour; got something else. Notes from triage: ' || md5(g.i::text) END,
       g.status::task_status,
       (CASE WHEN ${h(4)} % 100 < 5 THEN 'urgent' WHEN ${h(4)} % 100 < 25 THEN 'high' WHEN ${h(4)} % 100 < 60 THEN 'medium'
             WHEN ${h(4)} % 100 < 85 THEN 'low' ELSE 'none' END)::task_priority,
       CASE WHEN g.i % 10 = 5 THEN ${id('task', `CASE WHEN g.i - 1 - 10 * (${h(5)} % 20) >= 1 THEN g.i - 1 - 10 * (${h(5)} % 20) ELSE g.i - 1 END`)} END,
       CASE WHEN ${h(6)} % 100 < 85 THEN ${id('member', `1 + ${h(7)} % ${MEMBERS}`)} END,
       CASE WHEN g.i % ${activeStep} = 7 THEN ${id('sprint', ACTIVE_SPRINT)}
            WHEN ${h(8)} % 100 < 60 THEN ${id('sprint', `1 + ${h(9)} % ${SPRINTS - 1} + (1 + ${h(9)} % ${SPRINTS - 1} >= ${ACTIVE_SPRINT})::int`)} END,
       CASE WHEN ${h(10)} % 100 < 70 THEN current_date - 180 + (${h(11)} % 365)::int END,
       CASE WHEN g.status = 'done' THEN g.created_at + (1 + ${h(12)} % 2000) * interval '1 hour' END,
       g.created_at,
       g.created_at + (${h(13)} % 3000) * interval '1 hour' * (g.status <> 'backlog')::int,
       CASE WHEN ${h(18)} % 100 < 70 THEN (ARRAY[${ESTIMATES.join(', ')}])[1 + ${h(19)} % ${ESTIMATES.length}] END,
       lpad(to_hex((${RANK_BASE} - sum(g.gap) OVER (ORDER BY g.place DESC, g.i DESC))::bigint), 16, '0')
  FROM (SELECT i, ${createdAt.replace(/g\.i/g, 'i')} AS created_at,
               CASE WHEN abs(hashint8extended(i, ${p * 100})) % 100 < 20 THEN 'backlog'
                    WHEN abs(hashint8extended(i, ${p * 100})) % 100 < 25 THEN 'planning'
                    WHEN abs(hashint8extended(i, ${p * 100})) % 100 < 45 THEN 'todo'
                    WHEN abs(hashint8extended(i, ${p * 100})) % 100 < 60 THEN 'in_progress'
                    WHEN abs(hashint8extended(i, ${p * 100})) % 100 < 65 THEN 'in_review'
                    WHEN abs(hashint8extended(i, ${p * 100})) % 100 < 95 THEN 'done'
                    ELSE 'cancelled' END AS status,
               -- Its place in the order from the top (moved: nearer the top, more often than not), and its gap.
               CASE WHEN ${moved} THEN ${n} * power(${hi(20)} / 1000000.0, 2) ELSE i END AS place,
               CASE WHEN ${moved} THEN ${RANK_GAP}::bigint >> (${hi(21)} % 20) ELSE ${RANK_GAP}::bigint END AS gap
          FROM generate_series(1, ${n}) i) g;

-- 0 to 3 labels per task (a quarter each), distinct: (base + 7j) mod 30 for j < count.
INSERT INTO task_labels (project_id, task_id, label_id)
SELECT ${id('project', 0)}, ${id('task', 'g.i')}, ${id('label', `1 + (${h(14)} + 7 * j) % ${LABELS}`)}
  FROM generate_series(1, ${n}) g(i)
  JOIN LATERAL generate_series(0, ${h(15)} % 4 - 1) j ON true;

-- 5 % of the tasks wait for 1 to 3 earlier tasks (so the graph has no cycle).
INSERT INTO task_dependencies (project_id, task_id, blocked_by_id, created_at)
SELECT ${id('project', 0)}, ${id('task', 'g.i')}, ${id('task', 'g.i - 1 - 7 * j')}, now() - interval '30 days' + j * interval '1 minute'
  FROM generate_series(20, ${n}) g(i)
  JOIN LATERAL generate_series(0, ${h(16)} % 3) j ON true
 WHERE ${h(17)} % 20 = 0;

-- Every task has at least its "created" entry.
INSERT INTO history_entries (project_id, task_id, actor, action, changes, created_at)
SELECT project_id, id, 'Bench key (API)', 'created', '[]', created_at FROM tasks WHERE project_id = ${id('project', 0)};
${p === 0 ? commentsScript(id) : ''}`;
}

/**
 * The big project's comments (decisions.md section 23): ${COMMENTS_ON_ONE_TASK} on one task, which the
 * comment list rows page through, and 1 to 5 (about 3) on every other task. One in four replies to
 * the comment before it (a top-level one); one in five mentions a member; each has its first
 * revision, by the project's key, as the service writes them.
 */
function commentsScript(id) {
  const project = id('project', 0);
  return `
INSERT INTO comments (id, project_id, task_id, parent_id, body, author_key_id, author_name, revision, created_at, updated_at)
SELECT md5(t.id::text || ':' || k)::uuid, t.project_id, t.id,
       CASE WHEN k % 4 = 0 THEN md5(t.id::text || ':' || (k - 1))::uuid END,
       'Comment ' || k || ': had a look, the steps reproduce it on staging; the log is in the ticket.'
         || CASE WHEN k % 5 = 1 THEN ' <@' || ${id('member', '1 + k % ' + MEMBERS)}::text || '> can you confirm?' ELSE '' END,
       key.id, 'Bench key (API)', 1, t.created_at + k * interval '1 minute', t.created_at + k * interval '1 minute'
  FROM tasks t
 CROSS JOIN (SELECT id FROM api_keys WHERE project_id = ${project}) key
 CROSS JOIN LATERAL generate_series(1, CASE WHEN t.id = ${id('task', COMMENTED_TASK)} THEN ${COMMENTS_ON_ONE_TASK}
                                            ELSE 1 + abs(hashtext(t.id::text)) % 5 END) k
 WHERE t.project_id = ${project};

INSERT INTO comment_revisions (comment_id, number, body, author_key_id, author_name, created_at)
SELECT id, 1, body, author_key_id, author_name, created_at FROM comments WHERE project_id = ${project};

INSERT INTO comment_mentions (comment_id, position, project_id, membership_id)
SELECT id, 1, project_id, substring(body from '<@([0-9a-f-]{36})>')::uuid FROM comments WHERE project_id = ${project} AND body LIKE '%<@%';
`;
}

/** The service's triggers on the seeded tables. */
const SEED_TRIGGERS = [
  { table: 'tasks', trigger: 'tasks_raise_list_version' },
  { table: 'tasks', trigger: 'tasks_record_list_delta' },
  { table: 'task_labels', trigger: 'task_labels_raise_list_version' },
  // The search document (migration task_search): one row per task, written once after the load
  // (searchScript) rather than appended to once per comment.
  { table: 'tasks', trigger: 'tasks_search_inserted' },
  { table: 'comments', trigger: 'comments_search_inserted' },
];

/** The search documents of a project's tasks, as the triggers would have left them: heading (title, description), live comments. */
function searchScript(project) {
  return `
INSERT INTO task_search (task_id, project_id, heading, comments)
SELECT t.id, t.project_id, task_search_heading(t.title, t.description), task_search_comment_words(t.id)
  FROM tasks t
 WHERE t.project_id = '${project}'::uuid;`;
}
const switchTriggers = (state) => SEED_TRIGGERS.map(({ table, trigger }) => `ALTER TABLE ${table} ${state} TRIGGER ${trigger};`).join('\n');

/**
 * The tables the seed fills. Only these get VACUUM ANALYZE: the ones the service fills as it
 * runs (stored answers, events, deliveries, ...) are left without statistics, as in a live
 * database, where autovacuum analyzes a table only once rows have come. Analyzed while empty, a
 * table is planned as empty: every connection would cache a sequential scan for the look-ups of
 * its write transactions (plans are made once per connection, database-engine.ts) and read the
 * whole table on each as it grows (measured: a create with Idempotency-Key read 4 600 stored
 * answers twice, 1.65 x the CPU of a create instead of 1.12 x).
 */
const SEEDED_TABLES = [
  'projects',
  'memberships',
  'labels',
  'sprints',
  'api_keys',
  'tasks',
  'task_labels',
  'task_dependencies',
  'history_entries',
  'sprint_ledger',
  'comments',
  'comment_revisions',
  'comment_mentions',
  'task_search',
];

/** The id the seed gives a row (as md5(...)::uuid in projectScript). */
function seededId(p, kind, i) {
  return createHash('md5')
    .update(`bench:${p}:${kind}:${i}`)
    .digest('hex')
    .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
}

/**
 * Seeds the big project (index 0) and the small ones through `session` (SqlSession of
 * dist/database/database-engine.js), then VACUUM ANALYZE of what it filled, so that the planner
 * has statistics and index-only scans see an all-visible map. Returns each project's id and key.
 */
async function seed(session, { bigTasks, smallProjects, smallTasks }) {
  const projects = [];
  for (let p = 0; p <= smallProjects; p++) {
    const key = newApiKey();
    // The service's triggers that raise task_list_versions fire once per row at commit: off
    // while bulk loading (version 0 is as good a starting version as any).
    await session.exec(`BEGIN;
${switchTriggers('DISABLE')}
${projectScript(p, p === 0 ? bigTasks : smallTasks, key)}
${searchScript(seededId(p, 'project', 0))}
${switchTriggers('ENABLE')}
COMMIT;`);
    const id = seededId(p, 'project', 0);
    // The ledger of the active sprint and of the last closed ones, and the closed ones' reports.
    await replaySprints(session, {
      projectId: id,
      sprintId: (s) => seededId(p, 'sprint', s),
      first: ACTIVE_SPRINT - REPORTED_SPRINTS,
      active: ACTIVE_SPRINT,
    });
    projects.push({ index: p, id, key: key.secret, tasks: p === 0 ? bigTasks : smallTasks });
  }
  // Not in a transaction block: VACUUM refuses to run inside one.
  await session.exec(`VACUUM ANALYZE ${SEEDED_TABLES.join(', ')}`);
  return projects;
}

module.exports = { seed, seededId, newApiKey, PERMISSIONS, SEARCH_WORD, ACTIVE_SPRINT, COMMENTED_TASK, COMMENTS_ON_ONE_TASK };
