import { createProject } from './support/fixtures';
import { Answer, atOnce, counter, describeRaces, inLanes, Json, lanesFor, listen, RACE_ROUNDS, raceClient, RaceClient } from './support/races';
import { startTestApp, TestApp } from './support/test-app';

// decisions.md sections 17 and 23: comments written by several people at once. Requests sent at
// the same moment, RACE_ROUNDS rounds of each race, the invariants checked after every round;
// the lock order that makes them hold is docs/locking.md (a comment's task, then the comments,
// a top-level one before its reply). Rounds run in lanes (inLanes), each lane in a project of its own.
describeRaces('comments written at once (decisions.md sections 17 and 23)', () => {
  let t: TestApp;
  let baseUrl: string;
  /** A project's key per lane (every race here is of two requests). */
  let lanes: RaceClient[];
  const LANES = lanesFor(2);
  /** Every answer of a race, to check at the end that none was a conflict or a server error. */
  const answers: { race: string; answer: Answer }[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    baseUrl = await listen(t);
    lanes = [];
    for (let lane = 0; lane < LANES; lane++) lanes.push(raceClient(baseUrl, (await createProject(t, `Comment races ${lane}`)).key));
  });
  afterAll(() => t.close());

  async function race(name: string, ...requests: (() => Promise<Answer>)[]): Promise<Answer[]> {
    const answered = await atOnce(...requests);
    for (const answer of answered) answers.push({ race: name, answer });
    return answered;
  }

  const comments = (taskId: string) => `/api/v1/tasks/${taskId}/comments`;
  const one = (taskId: string, commentId: string) => `/api/v1/tasks/${taskId}/comments/${commentId}`;

  async function task(api: RaceClient): Promise<Json> {
    const res = await api.post('/api/v1/tasks', { title: 'Talked about' });
    if (res.status !== 201) throw new Error(`create answered ${res.status}`);
    return res.body.task;
  }

  async function comment(api: RaceClient, taskId: string, body: string, parentId?: string): Promise<Json> {
    const res = await api.post(comments(taskId), { body, ...(parentId ? { parentId } : {}) });
    if (res.status !== 201) throw new Error(`comment answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.comment;
  }

  /** What the database holds of a task's comments that section 23 forbids: a tombstone without replies, or a reply to a reply. */
  async function brokenThreads(taskId: string): Promise<string[]> {
    const rows = await t.prisma.comment.findMany({ where: { taskId }, select: { id: true, parentId: true, deletedAt: true } });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return rows.flatMap((row) => [
      ...(row.deletedAt && !rows.some((reply) => reply.parentId === row.id) ? [`tombstone ${row.id} without replies`] : []),
      ...(row.parentId && byId.get(row.parentId)?.parentId ? [`reply ${row.id} to a reply`] : []),
    ]);
  }

  it('loses no revision: two edits of one comment at once both apply, one after the other, and every answer shows one of its revisions', async () => {
    const problems: string[] = [];
    // A task per lane, commented on round after round.
    const taskIds = await Promise.all(lanes.map(async (api) => (await task(api)).id));
    await inLanes(LANES, RACE_ROUNDS, async (round, lane) => {
      const [api, taskId] = [lanes[lane], taskIds[lane]];
      const { id } = await comment(api, taskId, `Original ${round}`);
      // Two different texts, or (one round in three) the same one twice: then one edit changes nothing.
      const [a, b] = round % 3 === 2 ? [`Same ${round}`, `Same ${round}`] : [`Edit A ${round}`, `Edit B ${round}`];
      const edits = await race(
        'two edits of one comment',
        () => api.patch(one(taskId, id), { body: a }),
        () => api.patch(one(taskId, id), { body: b }),
      );
      if (edits.some((edit) => edit.status !== 200)) {
        problems.push(`round ${round}: answered ${edits.map((edit) => edit.status).join(' and ')}`);
        return;
      }
      const [{ revisions }, current] = await Promise.all([
        api.get(`${one(taskId, id)}/revisions`).then((answer) => answer.body),
        api.get(one(taskId, id)).then((answer) => answer.body.comment),
      ]);
      const bodies = revisions.map((revision: Json) => revision.body);
      const expected = a === b ? [a, `Original ${round}`] : undefined;
      if (revisions.map((revision: Json) => revision.number).join() !== [...revisions.keys()].map((i) => revisions.length - i).join())
        problems.push(`round ${round}: revisions numbered ${revisions.map((revision: Json) => revision.number).join()}`);
      if (expected ? bodies.join('|') !== expected.join('|') : revisions.length !== 3 || !bodies.includes(a) || !bodies.includes(b))
        problems.push(`round ${round}: revisions ${bodies.join(' | ')}`);
      for (const edit of edits)
        if (!bodies.includes(edit.body.comment.body)) problems.push(`round ${round}: answered ${edit.body.comment.body}, which is no revision`);
      if (current.body !== bodies[0]) problems.push(`round ${round}: the comment shows ${current.body}, its newest revision is ${bodies[0]}`);
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it('never leaves a reply under a comment that is gone: the deletion of a top-level comment and a reply to it at once', async () => {
    const problems: string[] = [];
    // A task per lane, commented on round after round.
    const taskIds = await Promise.all(lanes.map(async (api) => (await task(api)).id));
    await inLanes(LANES, RACE_ROUNDS, async (round, lane) => {
      const [api, taskId] = [lanes[lane], taskIds[lane]];
      const parent = await comment(api, taskId, `Parent ${round}`);
      const [deleted, replied] = await race(
        'delete a comment, reply to it',
        () => api.delete(one(taskId, parent.id)),
        () => api.post(comments(taskId), { body: `Reply ${round}`, parentId: parent.id }),
      );
      if (deleted.status !== 204 || ![201, 404].includes(replied.status)) {
        problems.push(`round ${round}: answered ${deleted.status} and ${replied.status}`);
        return;
      }
      const after = await api.get(one(taskId, parent.id));
      if (replied.status === 201) {
        // The reply came first: the deletion found it and left a tombstone.
        const reply = await api.get(one(taskId, replied.body.comment.id));
        if (reply.status !== 200) problems.push(`round ${round}: the reply answered 201, then ${reply.status}`);
        if (after.status !== 200 || !after.body.comment.deleted) problems.push(`round ${round}: a reply stands, its parent answers ${after.status}`);
        await api.delete(one(taskId, replied.body.comment.id));
      } else if (after.status !== 404) problems.push(`round ${round}: the reply was refused, yet the parent answers ${after.status}`);
      problems.push(...(await brokenThreads(taskId)).map((problem) => `round ${round}: ${problem}`));
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it('removes a tombstone with its last reply: two last replies deleted at once, a last reply deleted while a reply to the tombstone is posted', async () => {
    const problems: string[] = [];
    // A task per lane, commented on round after round.
    const taskIds = await Promise.all(lanes.map(async (api) => (await task(api)).id));
    await inLanes(LANES, RACE_ROUNDS, async (round, lane) => {
      const [api, taskId] = [lanes[lane], taskIds[lane]];
      const parent = await comment(api, taskId, `Parent ${round}`);
      const [first, second] = [await comment(api, taskId, `One ${round}`, parent.id), await comment(api, taskId, `Two ${round}`, parent.id)];
      await api.delete(one(taskId, parent.id));
      const answered =
        round % 2 === 0
          ? await race(
              'two last replies deleted at once',
              () => api.delete(one(taskId, first.id)),
              () => api.delete(one(taskId, second.id)),
            )
          : [
              (await api.delete(one(taskId, first.id))).status === 204 ? { status: 204, body: undefined } : { status: 0, body: undefined },
              ...(await race(
                'the last reply deleted, a reply to its tombstone posted',
                () => api.delete(one(taskId, second.id)),
                () => api.post(comments(taskId), { body: `Late ${round}`, parentId: parent.id }),
              )),
            ];
      const expected = round % 2 === 0 ? [204, 204] : [204, 204, 404];
      if (answered.map((answer) => answer.status).join() !== expected.join())
        problems.push(`round ${round}: answered ${answered.map((answer) => answer.status).join(', ')}`);
      const gone = await api.get(one(taskId, parent.id));
      if (gone.status !== 404) problems.push(`round ${round}: the tombstone answers ${gone.status} after its last reply went`);
      problems.push(...(await brokenThreads(taskId)).map((problem) => `round ${round}: ${problem}`));
    });
    expect(problems.slice(0, 10)).toEqual([]);
    for (const [lane, api] of lanes.entries()) expect((await api.get(comments(taskIds[lane]))).body.total).toBe(0);
  });

  it('leaves nothing of a thread deleted from both ends at once: a top-level comment and its only reply', async () => {
    const problems: string[] = [];
    // A task per lane, commented on round after round.
    const taskIds = await Promise.all(lanes.map(async (api) => (await task(api)).id));
    await inLanes(LANES, RACE_ROUNDS, async (round, lane) => {
      const [api, taskId] = [lanes[lane], taskIds[lane]];
      const parent = await comment(api, taskId, `Parent ${round}`);
      const reply = await comment(api, taskId, `Reply ${round}`, parent.id);
      const answered = await race(
        'a comment and its only reply deleted at once',
        () => api.delete(one(taskId, parent.id)),
        () => api.delete(one(taskId, reply.id)),
      );
      if (answered.some((answer) => answer.status !== 204)) problems.push(`round ${round}: answered ${answered.map((a) => a.status).join(' and ')}`);
      const left = (await api.get(comments(taskId))).body.total;
      if (left !== 0) problems.push(`round ${round}: ${left} comments left`);
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it('writes no revision of a deleted comment: an edit and the deletion at once', async () => {
    const problems: string[] = [];
    // A task per lane, commented on round after round.
    const taskIds = await Promise.all(lanes.map(async (api) => (await task(api)).id));
    await inLanes(LANES, RACE_ROUNDS, async (round, lane) => {
      const [api, taskId] = [lanes[lane], taskIds[lane]];
      const { id } = await comment(api, taskId, `Doomed ${round}`);
      const [edited, deleted] = await race(
        'an edit and the deletion of one comment',
        () => api.patch(one(taskId, id), { body: `Edited ${round}` }),
        () => api.delete(one(taskId, id)),
      );
      if (![200, 404].includes(edited.status) || deleted.status !== 204)
        problems.push(`round ${round}: answered ${edited.status} and ${deleted.status}`);
      if ((await t.prisma.commentRevision.count({ where: { commentId: id } })) !== 0) problems.push(`round ${round}: revisions outlived the comment`);
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it('lets nothing survive a purge: a comment posted as its task goes to the trash, then as the task is purged', async () => {
    const problems: string[] = [];
    await inLanes(LANES, RACE_ROUNDS, async (round, lane) => {
      const api = lanes[lane];
      const { id: taskId } = await task(api);
      const [trashed, early] = await race(
        'a task sent to the trash, a comment posted on it',
        () => api.delete(`/api/v1/tasks/${taskId}`),
        () => api.post(comments(taskId), { body: `Early ${round}` }),
      );
      if (trashed.status !== 204 || ![201, 404].includes(early.status))
        problems.push(`round ${round}: answered ${trashed.status} and ${early.status}`);
      const [purged, late] = await race(
        'a task purged, a comment posted on it',
        () => api.delete(`/api/v1/trash/${taskId}`),
        () => api.post(comments(taskId), { body: `Late ${round}` }),
      );
      if (purged.status !== 204 || late.status !== 404) problems.push(`round ${round}: answered ${purged.status} and ${late.status}`);
      const left = await t.prisma.comment.count({ where: { taskId } });
      if (left !== 0) problems.push(`round ${round}: ${left} comments survived the purge`);
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it('answered no race with a conflict or a server error, and retried no deadlock nor serialization failure', async () => {
    const failed = answers.filter(({ answer }) => answer.status === 409 || answer.status >= 500);
    expect(failed.slice(0, 10).map(({ race: name, answer }) => `${name}: ${answer.status} ${answer.body?.code}`)).toEqual([]);
    expect(answers.length).toBeGreaterThan(RACE_ROUNDS * 10);
    expect(await counter(baseUrl, 'db_write_retries_total', { reason: 'deadlock' })).toBe(0);
    expect(await counter(baseUrl, 'db_write_retries_total', { reason: 'serialization_failure' })).toBe(0);
  });
});
