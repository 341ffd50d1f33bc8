'use strict';
// The rows of the table, as load.js scenarios. Reads and patches aim at the big project;
// create adds its tasks to a small project ("writer"), so that the big project keeps its
// size (the list rows run before the writes anyway). Patch and delete+restore cycle over
// pools of existing tasks, so no run can exhaust them.

const PRIORITIES = ['urgent', 'high', 'medium', 'low', 'none'];

function scenarios({ bigKey, writerKey, fixtures }) {
  const auth = (key) => ({ authorization: `Bearer ${key}` });
  const big = auth(bigKey);
  const filtered = `/api/v1/tasks?status=todo,in_progress&assigneeId=${fixtures.assigneeId}&q=${fixtures.searchWord}`;
  let detailCount = 0;
  let createCount = 0;
  let patchCount = 0;

  // delete+restore: each iteration takes a task out of the pool and puts it back once
  // restored, so that no two connections ever hold the same task.
  const pool = [...fixtures.trashable];
  const taken = new Set();

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
    detail: {
      name: 'detail, task with dependencies',
      headers: big,
      steps: [() => ({ method: 'GET', path: `/api/v1/tasks/${fixtures.withDependencies[detailCount++ % fixtures.withDependencies.length]}` })],
    },
    create: {
      name: 'create (small project)',
      headers: auth(writerKey),
      steps: [
        () => {
          const n = createCount++;
          const members = fixtures.writerMembers;
          const labels = fixtures.writerLabels;
          return {
            method: 'POST',
            path: '/api/v1/tasks',
            body: {
              title: `Bench created task ${n}`,
              description: 'Created by the benchmark: a short description, as most tasks have.',
              status: 'todo',
              priority: PRIORITIES[n % PRIORITIES.length],
              assigneeId: members[n % members.length],
              labelIds: [labels[n % labels.length], labels[(n + 7) % labels.length]],
              sprintId: fixtures.writerSprint,
              dueDate: '2027-03-15',
            },
          };
        },
      ],
    },
    patch: {
      name: 'patch (title + priority)',
      headers: big,
      steps: [
        () => {
          const n = patchCount++;
          const id = fixtures.patchable[n % fixtures.patchable.length];
          // A new title every time, so every patch writes (and records history).
          return { method: 'PATCH', path: `/api/v1/tasks/${id}`, body: { title: `Bench patch ${n}`, priority: PRIORITIES[n % PRIORITIES.length] } };
        },
      ],
    },
    // The list when the service cannot reuse anything: each iteration changes a task of the
    // project, then reads the default page, which must then be read and counted again.
    patchList: {
      name: 'patch + list (the page read again after each change)',
      headers: big,
      steps: [
        () => {
          const n = patchCount++;
          const id = fixtures.patchable[n % fixtures.patchable.length];
          return { method: 'PATCH', path: `/api/v1/tasks/${id}`, body: { title: `Bench patch ${n}` } };
        },
        () => ({ method: 'GET', path: '/api/v1/tasks' }),
      ],
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

module.exports = { scenarios };
