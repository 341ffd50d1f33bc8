import { TASK_LIST_CACHE_LIMITS, TaskListCache } from '../src/tasks/task-list-cache';

// The page cache's bound with its real limits, past what any HTTP test could send: keys of the
// length a list with a long `q` makes, and pages short and long.
describe('task list cache bounds (src/tasks/task-list-cache.ts)', () => {
  // A list key as TaskReader builds it: the order, the SQL conditions, their values.
  const listKey = (i: number) => `created\u0000t.project_id = $1 AND t.title ILIKE $2 ${'x'.repeat(1_000)}\u0000["p","%${i}%"]`;
  const pageKey = (i: number) => `${listKey(i)}\u000050\u0000null`;
  const emptyPage = { version: '7', total: 0, body: '{"tasks":[],"nextCursor":null,"total":0}' };

  it('keeps at most its limit of pages and totals, and of bytes counted with their keys, whatever lists are asked', () => {
    const cache = new TaskListCache();
    const lists = 3 * TASK_LIST_CACHE_LIMITS.pages;
    for (let i = 0; i < lists; i++) cache.remember(listKey(i), pageKey(i), emptyPage);
    const usage = cache.usage();
    expect(usage.pages).toBeLessThanOrEqual(TASK_LIST_CACHE_LIMITS.pages);
    expect(usage.totals).toBeLessThanOrEqual(TASK_LIST_CACHE_LIMITS.totals);
    expect(usage.bytes).toBeLessThanOrEqual(TASK_LIST_CACHE_LIMITS.bytes);
    // What it holds is what it counts: every key's characters at least.
    let remembered = 0;
    let keyBytes = 0;
    for (let i = 0; i < lists; i++) {
      if (cache.page(pageKey(i))) {
        remembered++;
        keyBytes += 2 * pageKey(i).length;
      }
      if (cache.total(listKey(i))) keyBytes += 2 * listKey(i).length;
    }
    expect(remembered).toBe(usage.pages);
    expect(usage.bytes).toBeGreaterThanOrEqual(keyBytes);
  });

  it('keeps at most its limit of bytes when pages are large', () => {
    const cache = new TaskListCache();
    const body = `{"tasks":[${'"x",'.repeat(256 * 1024)}"x"],"nextCursor":null,"total":1}`;
    for (let i = 0; i < 200; i++) cache.remember(listKey(i), pageKey(i), { ...emptyPage, body });
    expect(cache.usage().bytes).toBeLessThanOrEqual(TASK_LIST_CACHE_LIMITS.bytes);
    expect(cache.usage().pages).toBeLessThan(200);
  });

  it('forgets the least recently used first', () => {
    const cache = new TaskListCache();
    Object.assign(cache.limits, { pages: 3, totals: 2 });
    for (const i of [1, 2, 3]) cache.remember(listKey(i), pageKey(i), emptyPage);
    cache.page(pageKey(1));
    cache.remember(listKey(4), pageKey(4), emptyPage);
    expect([1, 2, 3, 4].map((i) => cache.page(pageKey(i)) !== undefined)).toEqual([true, false, true, true]);
    expect([1, 2, 3, 4].map((i) => cache.total(listKey(i)) !== undefined)).toEqual([false, false, true, true]);
  });
});
