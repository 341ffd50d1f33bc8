import { randomBytes } from 'node:crypto';
import { createProject, createTask, TestProject, useProject } from './support/fixtures';
import { useTestApp } from './support/test-app';
import { Prisma } from '../src/generated/prisma/client';
import { textSearchHits } from '../src/tasks/finding/text-search';
import { EventRetention } from '../src/events/event-retention.service';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

// decisions.md section 25, `search` on GET /api/v1/tasks and GET /api/v1/trash: each rule a test, through HTTP.
describe('search (decisions.md section 25)', () => {
  const t = useTestApp();
  const project = useProject(t, 'Search');

  /** A word no other test uses: letters only, so that it is one word to the search. */
  const word = (stem = 'w'): string =>
    stem +
    [...randomBytes(8)]
      .map((byte) => String.fromCharCode(97 + (byte % 26)))
      .join('')
      .replace(/or/g, 'ox');

  async function search(query: string, of: TestProject = project, list = 'tasks'): Promise<Json> {
    const res = await of.api.get(`/api/v1/${list}?${query}`);
    if (res.status !== 200) throw new Error(`GET ${list}?${query} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
  const ids = async (text: string, more = '', of: TestProject = project, list = 'tasks'): Promise<string[]> =>
    (await search(`search=${encodeURIComponent(text)}${more}`, of, list)).tasks.map((task: Json) => task.id);
  const comment = async (taskId: string, body: string): Promise<Json> =>
    (await project.api.post(`/api/v1/tasks/${taskId}/comments`, { body }).expect(201)).body.comment;

  describe('words', () => {
    it('finds a word prefix: deploy finds deployment', async () => {
      const stem = word('deploy');
      const task = await createTask(project, { title: `Check the ${stem}ment logs` });
      expect(await ids(stem)).toEqual([task.id]);
      expect(await ids(`${stem}mentx`)).toEqual([]);
    });

    it('is accent-insensitive both ways: resume finds Résumé and résumé finds resume', async () => {
      const stem = word();
      const accented = await createTask(project, { title: `Résumé ${stem}` });
      const plain = await createTask(project, { title: `resume ${stem}` });
      expect((await ids(`resume ${stem}`)).sort()).toEqual([accented.id, plain.id].sort());
      expect((await ids(`RÉSUMÉ ${stem}`)).sort()).toEqual([accented.id, plain.id].sort());
    });

    it('is case-insensitive', async () => {
      const stem = word();
      const task = await createTask(project, { title: `${stem.toUpperCase()} in capitals` });
      expect(await ids(stem)).toEqual([task.id]);
      expect(await ids(stem.toUpperCase())).toEqual([task.id]);
    });

    it('requires every word, wherever it is: one in the title, one in the description, one in a comment', async () => {
      const [a, b, c] = [word(), word(), word()];
      const all = await createTask(project, { title: `${a} title`, description: `${b} description` });
      await comment(all.id, `a comment with ${c}`);
      const some = await createTask(project, { title: `${a} only` });
      expect(await ids(`${a} ${b} ${c}`)).toEqual([all.id]);
      expect((await ids(a)).sort()).toEqual([all.id, some.id].sort());
    });

    it('matches a "phrase" only adjacent and in that order', async () => {
      const [a, b] = [word(), word()];
      const adjacent = await createTask(project, { title: `${a} ${b} here` });
      await createTask(project, { title: `${b} ${a} reversed` });
      await createTask(project, { title: `${a} apart ${b}` });
      expect(await ids(`"${a} ${b}"`)).toEqual([adjacent.id]);
    });

    it('does not match a phrase across the title and the description', async () => {
      const [a, b] = [word(), word()];
      await createTask(project, { title: `ends with ${a}`, description: `${b} starts it` });
      expect(await ids(`"${a} ${b}"`)).toEqual([]);
      expect(await ids(`${a} ${b}`)).toHaveLength(1);
    });

    it('excludes tasks holding a -word', async () => {
      const [a, b] = [word(), word()];
      const kept = await createTask(project, { title: `${a} kept` });
      const excluded = await createTask(project, { title: `${a} dropped`, description: `mentions ${b}` });
      expect(await ids(`${a} -${b}`)).toEqual([kept.id]);
      expect((await ids(a)).sort()).toEqual([kept.id, excluded.id].sort());
    });

    it('matches either term around or', async () => {
      const [a, b, c] = [word(), word(), word()];
      const first = await createTask(project, { title: `${a} first` });
      const second = await createTask(project, { title: `${b} second` });
      await createTask(project, { title: `${c} neither` });
      expect((await ids(`${a} or ${b}`)).sort()).toEqual([first.id, second.id].sort());
      expect((await ids(`${a} OR ${b}`)).sort()).toEqual([first.id, second.id].sort());
    });

    it('punctuation only is not an error and matches nothing', async () => {
      await createTask(project, { title: 'Something to find' });
      for (const text of ['!!!', '...', '"', '-', '()', '&|!', ':*', '"" -', '\\']) {
        const body = await search(`search=${encodeURIComponent(text)}`);
        expect([text, body.total, body.tasks]).toEqual([text, 0, []]);
      }
    });

    it('takes 1 to 500 characters: empty and 501 are 400 validation_failed naming search', async () => {
      for (const text of ['', 'x'.repeat(501)]) {
        const res = await project.api.get(`/api/v1/tasks?search=${text}`);
        expect([res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', 'search']);
      }
      await project.api.get(`/api/v1/tasks?search=${'x'.repeat(500)}`).expect(200);
    });

    it('takes quotes, backslashes, SQL keywords, % and _ as text, never a 5xx; NUL is 400', async () => {
      const stem = word();
      const task = await createTask(project, { title: `${stem} 100% o'clock back\\slash under_score` });
      const texts = [
        `${stem} o'clock`,
        `${stem}'; DROP TABLE tasks; --`,
        `${stem} \\`,
        `${stem} %`,
        `${stem} _`,
        `"${stem}`,
        `${stem}" or 1=1 --`,
        `${stem} ') OR ('1'='1`,
        `${stem} :* & | ! <-> <2>`,
        `${stem} \\' \\\\ ''`,
      ];
      for (const text of texts) {
        const res = await project.api.get(`/api/v1/tasks?search=${encodeURIComponent(text)}`);
        expect([text, res.status]).toEqual([text, 200]);
      }
      expect(await ids(`${stem} o'clock`)).toEqual([task.id]);
      expect(await ids(`${stem} under_score`)).toEqual([task.id]);
      expect(await ids(`${stem} back\\slash`)).toEqual([task.id]);
      const nul = await project.api.get(`/api/v1/tasks?search=${stem}%00`);
      expect([nul.status, nul.body.code]).toEqual([400, 'validation_failed']);
      await project.api.get('/api/v1/tasks').expect(200);
    });
  });

  describe('what the document holds, at once', () => {
    it('finds a task created a moment ago, and one of a bulk create', async () => {
      const [a, b] = [word(), word()];
      const task = await createTask(project, { title: `${a} fresh` });
      expect(await ids(a)).toEqual([task.id]);
      const bulk = (await project.api.post('/api/v1/tasks/bulk', { tasks: [{ title: `${b} one` }, { title: 'two', description: b }] }).expect(201))
        .body.tasks;
      expect((await ids(b)).sort()).toEqual(bulk.map((created: Json) => created.id).sort());
    });

    it('finds the new title and description at once after a PATCH, and no longer the old ones', async () => {
      const [before, after, text] = [word(), word(), word()];
      const task = await createTask(project, { title: `${before} title` });
      expect(await ids(before)).toEqual([task.id]);
      await project.api.patch(`/api/v1/tasks/${task.id}`, { title: `${after} title`, description: `${text} text` }).expect(200);
      expect(await ids(before)).toEqual([]);
      expect(await ids(after)).toEqual([task.id]);
      expect(await ids(text)).toEqual([task.id]);
      await project.api.patch(`/api/v1/tasks/${task.id}`, { description: null }).expect(200);
      expect(await ids(text)).toEqual([]);
    });

    it('finds a word only a comment holds, and stops when the comment is deleted', async () => {
      const secret = word();
      const task = await createTask(project, { title: 'No word here' });
      const said = await comment(task.id, `The ${secret} is in a comment`);
      expect(await ids(secret)).toEqual([task.id]);
      await project.api.delete(`/api/v1/tasks/${task.id}/comments/${said.id}`).expect(204);
      expect(await ids(secret)).toEqual([]);
    });

    it('finds an edited comment by its new words, not its old ones', async () => {
      const [before, after] = [word(), word()];
      const task = await createTask(project, { title: 'Edited comment' });
      const said = await comment(task.id, `first ${before}`);
      await project.api.patch(`/api/v1/tasks/${task.id}/comments/${said.id}`, { body: `then ${after}` }).expect(200);
      expect(await ids(before)).toEqual([]);
      expect(await ids(after)).toEqual([task.id]);
    });

    it("does not find a deleted comment's words while it stays as a tombstone", async () => {
      const secret = word();
      const task = await createTask(project, { title: 'Thread' });
      const parent = await comment(task.id, `parent says ${secret}`);
      await project.api.post(`/api/v1/tasks/${task.id}/comments`, { body: 'a reply', parentId: parent.id }).expect(201);
      await project.api.delete(`/api/v1/tasks/${task.id}/comments/${parent.id}`).expect(204);
      expect(await ids(secret)).toEqual([]);
      expect(await ids('reply', `&q=Thread`)).toEqual([task.id]);
    });

    it('stops finding a task trashed, finds it in the trash by its comment, and again in the list once restored', async () => {
      const secret = word();
      const task = await createTask(project, { title: 'To the trash' });
      await comment(task.id, `only here: ${secret}`);
      expect(await ids(secret)).toEqual([task.id]);
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      expect(await ids(secret)).toEqual([]);
      expect(await ids(secret, '', project, 'trash')).toEqual([task.id]);
      await project.api.post(`/api/v1/trash/${task.id}/restore`).expect(200);
      expect(await ids(secret)).toEqual([task.id]);
      expect(await ids(secret, '', project, 'trash')).toEqual([]);
    });

    it("never finds another project's tasks", async () => {
      const secret = word();
      const other = await createProject(t, 'Other search project');
      await createTask(other, { title: `${secret} elsewhere` });
      expect(await ids(secret)).toEqual([]);
      expect(await ids(secret, '', other)).toHaveLength(1);
    });
  });

  describe('totals, paging, relevance', () => {
    it('counts an exact total with the other filters (AND)', async () => {
      const stem = word();
      await createTask(project, { title: `${stem} alpha`, priority: 'high', status: 'todo' });
      await createTask(project, { title: `${stem} bravo`, priority: 'high', status: 'done' });
      await createTask(project, { title: `${stem} charlie`, priority: 'low', status: 'todo', labelIds: [project.labels[0].id] });
      await createTask(project, { title: 'no word', priority: 'high', status: 'todo' });
      const total = async (more: string) => (await search(`search=${stem}${more}`)).total;
      expect(await total('')).toBe(3);
      expect(await total('&priority=high')).toBe(2);
      expect(await total('&priority=high&status=todo')).toBe(1);
      expect(await total(`&labelId=${project.labels[0].id}`)).toBe(1);
      expect(await total('&q=bravo')).toBe(1);
      expect(await total('&estimated=true')).toBe(0);
    });

    it('pages through a searched list in every order, each task once, with an exact total on every page', async () => {
      const stem = word();
      const made: string[] = [];
      for (let i = 0; i < 7; i++) made.push((await createTask(project, { title: `${stem} ${i}`, description: i % 2 ? stem : 'x' })).id);
      await createTask(project, { title: 'not matching' });
      for (const sort of ['created', 'rank', 'relevance']) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page: Json = await search(`search=${stem}&sort=${sort}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          expect([sort, page.total]).toEqual([sort, 7]);
          seen.push(...page.tasks.map((task: Json) => task.id));
          cursor = page.nextCursor;
        } while (cursor);
        expect([sort, seen.length, new Set(seen).size]).toEqual([sort, 7, 7]);
        expect([...seen].sort()).toEqual([...made].sort());
      }
    });

    it('pages and counts a search of more than a thousand matches as one of a few, trashed matches left out: the same pages as filter text ~, in both orders', async () => {
      // A search's page is taken from its matches when they are at most 1 000 (TaskReader.readPage), from the
      // order's index otherwise, and a search alone counts its total on the words (liveTextSearchCount);
      // `filter=text ~` is the same condition read the one way only, and counted on the tasks.
      const [many, few] = [word(), word()];
      const created: string[] = [];
      for (let batch = 0; batch < 11; batch++) {
        const tasks = Array.from({ length: batch < 10 ? 100 : 7 }, (_, i) => ({ title: `${many} ${batch}-${i}`, description: i < 5 ? few : 'x' }));
        created.push(...(await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(201)).body.tasks.map((task: Json) => task.id));
      }
      // Two matches of `many` in the trash: the list counts them out, the trash in.
      for (const id of created.slice(-2)) await project.api.delete(`/api/v1/tasks/${id}`).expect(204);
      expect((await project.api.get(`/api/v1/trash?search=${many}`).expect(200)).body.total).toBe(2);
      const pages = async (query: string): Promise<Json[]> => {
        const all: Json[] = [];
        let cursor: string | null = null;
        do {
          const page: Json = await search(`${query}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          all.push({ total: page.total, ids: page.tasks.map((task: Json) => task.id) });
          cursor = page.nextCursor;
        } while (cursor);
        return all;
      };
      for (const [text, total] of [
        [many, 1005],
        [few, 55],
      ] as const) {
        for (const sort of ['created', 'rank']) {
          const searched = await pages(`search=${text}&sort=${sort}`);
          expect(searched.flatMap((page) => page.ids)).toHaveLength(total);
          expect(searched).toEqual(await pages(`filter=${encodeURIComponent(`text ~ "${text}"`)}&sort=${sort}`));
        }
        const relevant = (await pages(`search=${text}&sort=relevance`)).flatMap((page) => page.ids);
        expect(new Set(relevant).size).toBe(total);
      }
    });

    it('brings a searched total up to date after every kind of change exactly as counting again: the totals of filter text ~, which is always counted', async () => {
      // A searched total is brought up to date by the task rows' deltas, read with the heading they
      // hold, unless a comment or a purge came between (TaskReader.readPage); `text ~` is the same
      // condition, never brought up to date so. Each step reads the lists once before and after it.
      const stem = word();
      const [inTitle, inDescription, inComment, other] = [
        await createTask(project, { title: `${stem} in title` }),
        await createTask(project, { title: 'in description', description: `about ${stem}` }),
        await createTask(project, { title: 'in a comment' }),
        await createTask(project, { title: 'other' }),
      ];
      const note = await comment(inComment.id, `mentions ${stem}`);
      const lists = [
        ['tasks', `search=${stem}`, `filter=${encodeURIComponent(`text ~ "${stem}"`)}`],
        ['tasks', `search=${stem}&status=todo`, `filter=${encodeURIComponent(`text ~ "${stem}" and status = todo`)}`],
        [
          'tasks',
          `search=${stem}&filter=${encodeURIComponent('priority != urgent')}`,
          `filter=${encodeURIComponent(`text ~ "${stem}" and priority != urgent`)}`,
        ],
        ['trash', `search=${stem}`, `filter=${encodeURIComponent(`text ~ "${stem}"`)}`],
      ];
      const totals = async (step: string): Promise<void> => {
        for (const [list, searched, counted] of lists) {
          const [a, b] = [await search(`${searched}&limit=100`, project, list), await search(`${counted}&limit=100`, project, list)];
          expect([step, list, searched, a.total, a.tasks.length]).toEqual([step, list, searched, b.total, b.total]);
        }
      };
      const patch = (task: Json, body: Json) => project.api.patch(`/api/v1/tasks/${task.id}`, body).expect(200);
      const steps: [string, () => Promise<unknown>][] = [
        ['a title takes the word', () => patch(other, { title: `${stem} now` })],
        ['a title loses the word', () => patch(inTitle, { title: 'no longer' })],
        ['a description loses the word', () => patch(inDescription, { description: 'nothing' })],
        ['a description takes it back', () => patch(inDescription, { description: `${stem} again` })],
        ['a status changes', () => patch(other, { status: 'in_progress' })],
        ['a priority changes', () => patch(inDescription, { priority: 'urgent' })],
        ['a task is trashed', () => project.api.delete(`/api/v1/tasks/${other.id}`).expect(204)],
        ['a task comes back', () => project.api.post(`/api/v1/trash/${other.id}/restore`).expect(200)],
        ['a task is created', () => createTask(project, { title: `${stem} new` })],
        ['a comment takes the word', () => comment(inTitle.id, `now ${stem}`)],
        [
          'the word-holding comment is edited away',
          () => project.api.patch(`/api/v1/tasks/${inComment.id}/comments/${note.id}`, { body: 'gone' }).expect(200),
        ],
        ['a title changes after the comments', () => patch(inComment, { title: `${stem} by title` })],
        [
          'a task is trashed, then purged',
          async () => {
            await project.api.delete(`/api/v1/tasks/${inComment.id}`).expect(204);
            await totals('trashed before its purge');
            await project.api.delete(`/api/v1/trash/${inComment.id}`).expect(204);
          },
        ],
        ['a title changes after the purge', () => patch(other, { title: `${stem} last` })],
      ];
      await totals('at first');
      for (const [step, act] of steps) {
        await act();
        await totals(step);
        await totals(`${step}, again`);
      }
    });

    it('answers a search exactly when its matches fall from more than a thousand to one: the remembered total that chose the way is no answer', async () => {
      // TaskReader.readPage skips counting the matches up to 1 001 when this list's total was more
      // than a thousand: the purge below leaves one match, which the order's index must find alone.
      const stem = word();
      const parent = await createTask(project, { title: `${stem} parent` });
      for (let batch = 0; batch < 10; batch++) {
        const tasks = Array.from({ length: 100 }, (_, i) => ({ title: `${stem} ${batch}-${i}`, parentId: parent.id }));
        await project.api.post('/api/v1/tasks/bulk', { tasks }).expect(201);
      }
      const kept = await createTask(project, { title: `${stem} kept`, description: 'x' });
      expect((await search(`search=${stem}&limit=1`)).total).toBe(1002);
      await project.api.delete(`/api/v1/tasks/${parent.id}`).expect(204);
      await project.api.delete(`/api/v1/trash/${parent.id}`).expect(204);
      for (let round = 0; round < 2; round++) {
        const page: Json = await search(`search=${stem}&limit=1`);
        expect([round, page.total, page.tasks.map((task: Json) => task.id), page.nextCursor]).toEqual([round, 1, [kept.id], null]);
      }
    });

    it('orders sort=relevance title over description over comment, ties newest created first', async () => {
      const stem = word();
      const inComment = await createTask(project, { title: 'third' });
      await comment(inComment.id, `about ${stem}`);
      const inDescription = await createTask(project, { title: 'second', description: `about ${stem}` });
      const olderInTitle = await createTask(project, { title: `${stem} older` });
      const newerInTitle = await createTask(project, { title: `${stem} newer` });
      expect(await ids(stem, '&sort=relevance')).toEqual([newerInTitle.id, olderInTitle.id, inDescription.id, inComment.id]);
      expect(await ids(stem)).toEqual([newerInTitle.id, olderInTitle.id, inDescription.id, inComment.id]);
    });

    it('answers sort=relevance without search with 400 validation_failed naming sort', async () => {
      for (const list of ['tasks', 'trash']) {
        const res = await project.api.get(`/api/v1/${list}?sort=relevance`);
        expect([res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([400, 'validation_failed', 'sort']);
      }
    });

    it('refuses a cursor reused with another search or sort (400 invalid_cursor); another limit is fine', async () => {
      const stem = word();
      for (let i = 0; i < 3; i++) await createTask(project, { title: `${stem} ${i}` });
      for (const sort of ['created', 'relevance']) {
        const cursor = encodeURIComponent((await search(`search=${stem}&sort=${sort}&limit=1`)).nextCursor);
        for (const other of [`search=${stem}x&sort=${sort}`, `search=${stem}&sort=${sort === 'created' ? 'relevance' : 'created'}`, `sort=created`]) {
          const res = await project.api.get(`/api/v1/tasks?${other}&limit=1&cursor=${cursor}`);
          expect([other, res.status, res.body.code]).toEqual([other, 400, 'invalid_cursor']);
        }
        await project.api.get(`/api/v1/tasks?search=${stem}&sort=${sort}&limit=2&cursor=${cursor}`).expect(200);
      }
    });

    it('searches the trash with sort=relevance too', async () => {
      const stem = word();
      const inDescription = await createTask(project, { title: 'trash two', description: stem });
      const inTitle = await createTask(project, { title: `${stem} trash one` });
      for (const task of [inTitle, inDescription]) await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      expect(await ids(stem, '&sort=relevance', project, 'trash')).toEqual([inTitle.id, inDescription.id]);
      expect(await ids(stem, '', project, 'trash')).toEqual([inDescription.id, inTitle.id]);
    });
  });

  describe('the index', () => {
    it("matches the GIN index's expression, so that the index serves a search", async () => {
      const plan = await t.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
        return tx.$queryRaw<{ 'QUERY PLAN': string }[]>(Prisma.sql`EXPLAIN ${textSearchHits(project.id, 'invoice', 10)}`);
      });
      expect(plan.map((line) => line['QUERY PLAN']).join('\n')).toContain('task_search_document_idx');
    });
  });

  describe('limits', () => {
    // PostgreSQL keeps at most 1 MB of a task's words (decisions.md section 25, Limits): 4 words of
    // 2 046 letters a comment fill it at the 128th comment, whose words no longer fit.
    it("keeps a comment whose words no longer fit in its task's words; the words before it still find the task", async () => {
      const task = await createTask(project, { title: '!!!' });
      const stems: string[] = [];
      for (let n = 1; n <= 130; n++) {
        const words = [1, 2, 3, 4].map(() => word('l'));
        stems.push(words[0]);
        await project.api
          .post(`/api/v1/tasks/${task.id}/comments`, { body: words.map((stem) => stem + 'q'.repeat(2046 - stem.length)).join(' ') })
          .expect(201);
      }
      const listed = await project.api.get(`/api/v1/tasks/${task.id}/comments?limit=1`).expect(200);
      expect(listed.body.total).toBe(130);
      expect(await ids(stems[0])).toEqual([task.id]);
      expect(await ids(stems[126])).toEqual([task.id]);
      expect(await ids(stems[129])).toEqual([]);
    });
  });

  describe('the list cache', () => {
    it('does not serve a searched page that a comment made stale', async () => {
      const secret = word();
      const task = await createTask(project, { title: 'Cached' });
      expect(await ids(secret)).toEqual([]);
      expect(await ids(secret)).toEqual([]);
      const said = await comment(task.id, secret);
      expect(await ids(secret)).toEqual([task.id]);
      await project.api.patch(`/api/v1/tasks/${task.id}/comments/${said.id}`, { body: 'changed' }).expect(200);
      expect(await ids(secret)).toEqual([]);
    });

    it('does not serve a page or a total filtered by text ~ that a comment made stale', async () => {
      const secret = word();
      const task = await createTask(project, { title: 'Cached by filter' });
      const filtered = async () => {
        const body = await search(`filter=${encodeURIComponent(`text ~ "${secret}"`)}`);
        return { ids: body.tasks.map((shown: Json) => shown.id), total: body.total };
      };
      expect(await filtered()).toEqual({ ids: [], total: 0 });
      expect(await filtered()).toEqual({ ids: [], total: 0 });
      const said = await comment(task.id, secret);
      expect(await filtered()).toEqual({ ids: [task.id], total: 1 });
      await project.api.delete(`/api/v1/tasks/${task.id}/comments/${said.id}`).expect(204);
      expect(await filtered()).toEqual({ ids: [], total: 0 });
    });

    // Last: pruning with a clock days ahead removes the events of every project of the database.
    it('counts a searched total again when the events since it was remembered were pruned (EVENT_RETENTION_DAYS)', async () => {
      // A comment changes words without a delta; only its event tells (wordsKeptSince), and retention may remove it.
      const secret = word();
      const task = await createTask(project, { title: 'Quiet' });
      expect((await search(`search=${secret}`)).total).toBe(0);
      await comment(task.id, `now ${secret}`);
      const retention = new EventRetention(t.prisma, { ...t.config, eventRetentionDays: 1 });
      expect(await retention.prune(new Date(Date.now() + 3 * 24 * 60 * 60 * 1000))).toBeGreaterThan(0);
      const body = await search(`search=${secret}`);
      expect([body.total, body.tasks.map((shown: Json) => shown.id)]).toEqual([1, [task.id]]);
    });
  });
});
