import { randomBytes } from 'node:crypto';
import { createProject, TestProject } from './support/fixtures';
import { Answer, atOnce, describeRaces, Json, listen, RACE_ROUNDS, raceClient, RaceClient } from './support/races';
import { startTestApp, TestApp } from './support/test-app';

// decisions.md sections 17 and 25: the search document of a task written by several requests at
// once (two comments, a comment and a title change, an edit and a deletion), RACE_ROUNDS rounds
// each; after every round the next request finds exactly what the task and its live comments
// hold. The lock order that makes them hold is docs/locking.md (the search document after its task).
describeRaces('the search document written at once (decisions.md sections 17 and 25)', () => {
  let t: TestApp;
  let project: TestProject;
  let api: RaceClient;
  const answers: { race: string; answer: Answer }[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t, 'Search races');
    api = raceClient(await listen(t), project.key);
  });
  afterAll(() => t.close());

  const rounds = Math.max(1, Math.floor(RACE_ROUNDS / 4));
  const word = (): string =>
    'r' +
    [...randomBytes(8)]
      .map((byte) => String.fromCharCode(97 + (byte % 26)))
      .join('')
      .replace(/or/g, 'ox');
  const comments = (taskId: string) => `/api/v1/tasks/${taskId}/comments`;

  async function race(name: string, ...requests: (() => Promise<Answer>)[]): Promise<Answer[]> {
    const answered = await atOnce(...requests);
    for (const answer of answered) answers.push({ race: name, answer });
    return answered;
  }

  async function found(text: string): Promise<string[]> {
    const res = await api.get(`/api/v1/tasks?search=${encodeURIComponent(text)}`);
    if (res.status !== 200) throw new Error(`search answered ${res.status}`);
    return res.body.tasks.map((task: Json) => task.id);
  }

  async function task(title: string): Promise<string> {
    const res = await api.post('/api/v1/tasks', { title });
    if (res.status !== 201) throw new Error(`create answered ${res.status}`);
    return res.body.task.id;
  }

  it('keeps every word of comments written at once, and of a title changed meanwhile', async () => {
    const problems: string[] = [];
    const taskId = await task('Busy task');
    for (let round = 0; round < rounds; round++) {
      const [a, b, title] = [word(), word(), word()];
      await race(
        'two comments and a title',
        () => api.post(comments(taskId), { body: `first ${a}` }),
        () => api.post(comments(taskId), { body: `second ${b}` }),
        () => api.patch(`/api/v1/tasks/${taskId}`, { title: `Busy ${title}` }),
      );
      for (const text of [a, b, title, `${a} ${b} ${title}`]) {
        if ((await found(text)).join() !== taskId) problems.push(`round ${round}: ${text} not found`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('finds neither the old nor the deleted text after an edit and a deletion of two comments at once', async () => {
    const problems: string[] = [];
    const taskId = await task('Edited and deleted');
    for (let round = 0; round < rounds; round++) {
      const [edited, replaced, deleted, kept] = [word(), word(), word(), word()];
      const first = (await api.post(comments(taskId), { body: edited })).body.comment;
      const second = (await api.post(comments(taskId), { body: deleted })).body.comment;
      await api.post(comments(taskId), { body: kept });
      await race(
        'an edit and a deletion',
        () => api.patch(`${comments(taskId)}/${first.id}`, { body: replaced }),
        () => api.delete(`${comments(taskId)}/${second.id}`),
      );
      for (const gone of [edited, deleted]) if ((await found(gone)).length) problems.push(`round ${round}: ${gone} still found`);
      for (const there of [replaced, kept]) if ((await found(there)).join() !== taskId) problems.push(`round ${round}: ${there} not found`);
    }
    expect(problems).toEqual([]);
  });

  it('keeps a searched total the count of its matches when titles, descriptions, comments and searches go at once', async () => {
    // A searched total remembered mid-race is brought up to date by deltas (TaskReader.readPage)
    // when only task rows changed words since; `filter=text ~` is counted every time.
    const problems: string[] = [];
    const total = async (query: string): Promise<{ total: number; shown: number }> => {
      const res = await api.get(`/api/v1/tasks?${query}&limit=100`);
      if (res.status !== 200) throw new Error(`list answered ${res.status}`);
      return { total: res.body.total, shown: res.body.tasks.length };
    };
    for (let round = 0; round < rounds; round++) {
      const stem = word();
      const ids: string[] = [];
      for (const title of [`${stem} one`, 'two', 'three', 'four', `${stem} five`]) ids.push(await task(title));
      await api.patch(`/api/v1/tasks/${ids[3]}`, { description: `about ${stem}` });
      const searched = `search=${stem}`;
      await total(searched);
      await race(
        'words changed while searched',
        () => api.patch(`/api/v1/tasks/${ids[0]}`, { title: 'one' }),
        () => api.patch(`/api/v1/tasks/${ids[1]}`, { title: `${stem} two` }),
        () => api.post(comments(ids[2]), { body: `three ${stem}` }),
        () => api.patch(`/api/v1/tasks/${ids[3]}`, { description: 'nothing' }),
        () => api.patch(`/api/v1/tasks/${ids[4]}`, { status: 'in_progress' }),
        () => api.get(`/api/v1/tasks?${searched}`),
        () => api.get(`/api/v1/tasks?${searched}`),
      );
      await race(
        'a title changed while searched',
        () => api.patch(`/api/v1/tasks/${ids[0]}`, { title: `${stem} one again` }),
        () => api.get(`/api/v1/tasks?${searched}`),
      );
      const [a, b] = [await total(searched), await total(`filter=${encodeURIComponent(`text ~ "${stem}"`)}`)];
      if (a.total !== b.total || a.shown !== a.total || b.total !== 4)
        problems.push(`round ${round}: search ${JSON.stringify(a)}, text ~ ${JSON.stringify(b)}, 4 expected`);
    }
    expect(problems).toEqual([]);
  });

  afterAll(() => {
    const failed = answers.filter(({ answer }) => answer.status >= 300);
    expect(failed.map(({ race, answer }) => `${race}: ${answer.status} ${JSON.stringify(answer.body)}`)).toEqual([]);
  });
});
