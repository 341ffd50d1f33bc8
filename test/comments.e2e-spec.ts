import { asAdmin, createProject, createTask, ISO_TIMESTAMP, NO_SUCH_ID, TestProject, useProject } from './support/fixtures';
import { openEventStream } from './support/event-stream';
import { listen } from './support/races';
import { useTestApp } from './support/test-app';
import { startReceiver } from './support/webhook-receiver';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

// decisions.md section 23: comments, each rule a test, through HTTP.
describe('comments (decisions.md section 23)', () => {
  const t = useTestApp({ webhookAllowPrivateUrls: true });
  const project = useProject(t, 'Comments');
  const other = useProject(t, 'Another project');

  const comments = (taskId: string) => `/api/v1/tasks/${taskId}/comments`;
  const one = (taskId: string, commentId: string) => `/api/v1/tasks/${taskId}/comments/${commentId}`;

  /** Posts a comment (or a reply) with the project's key, expecting 201; its `comment`. */
  async function comment(taskId: string, body: string, fields: Json = {}, as: TestProject['api'] = project.api): Promise<Json> {
    const res = await as.post(comments(taskId), { body, ...fields });
    if (res.status !== 201) throw new Error(`POST comment answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.comment;
  }

  async function events(of: TestProject = project, after = 0): Promise<Json[]> {
    const all: Json[] = [];
    for (let more = true; more;) {
      const page = (await of.api.get(`/api/v1/events?after=${after}&limit=1000`).expect(200)).body;
      all.push(...page.events);
      [after, more] = [page.nextAfter, page.hasMore];
    }
    return all;
  }
  const lastSequence = async (of: TestProject = project) => (await events(of)).at(-1)?.sequence ?? 0;
  const commentRows = (taskId: string) => t.prisma.comment.count({ where: { taskId } });
  let listening: Promise<string> | undefined;
  const baseUrl = () => (listening ??= listen(t));

  describe('the resource', () => {
    it('creates a comment: 201 {comment} with Location, author as history names actors, editedAt null, deleted false', async () => {
      const task = await createTask(project);
      const res = await project.api.post(comments(task.id), { body: 'First **comment**' }).expect(201);
      const created = res.body.comment;
      expect(Object.keys(res.body)).toEqual(['comment']);
      expect(Object.keys(created).sort()).toEqual(
        ['author', 'body', 'createdAt', 'deleted', 'editedAt', 'id', 'mentions', 'parentId', 'taskId', 'updatedAt'].sort(),
      );
      expect(res.headers.location).toBe(`/api/v1/tasks/${task.id}/comments/${created.id}`);
      const key = (await asAdmin(t).get(`/admin/v1/projects/${project.id}/keys`).expect(200)).body.keys.find(
        (found: Json) => found.name === 'Test key',
      );
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        taskId: task.id,
        parentId: null,
        body: 'First **comment**',
        mentions: [],
        author: { keyId: key.id, name: 'Test key (API)' },
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
        updatedAt: created.createdAt,
        editedAt: null,
        deleted: false,
      });
      expect((await project.api.get(one(task.id, created.id)).expect(200)).body).toEqual({ comment: created });
    });

    it('lists a task’s comments oldest first, replies in the same list with their parentId, with total and a keyset cursor of its own', async () => {
      const task = await createTask(project);
      const made: Json[] = [];
      for (let i = 0; i < 4; i++) made.push(await comment(task.id, `Comment ${i}`));
      made.push(await comment(task.id, 'Reply to 0', { parentId: made[0].id }));
      made.push(await comment(task.id, 'Reply to 2', { parentId: made[2].id }));
      await comment((await createTask(project)).id, 'Another task’s');
      const seen: Json[] = [];
      let cursor: string | null = null;
      do {
        const page: Json = (await project.api.get(`${comments(task.id)}?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).expect(200))
          .body;
        expect(Object.keys(page).sort()).toEqual(['comments', 'nextCursor', 'total']);
        expect(page.total).toBe(6);
        expect(page.comments.length).toBeGreaterThan(0);
        seen.push(...page.comments);
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen.map((found) => found.id)).toEqual(made.map((found) => found.id));
      expect(seen.map((found) => found.parentId)).toEqual([null, null, null, null, made[0].id, made[2].id]);
      const sorted = [...seen].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
      expect(sorted).toEqual(seen);
    });

    it('refuses a cursor it did not issue, another list’s cursor, a limit out of 1..100 and an unknown query parameter', async () => {
      const task = await createTask(project);
      await comment(task.id, 'a');
      await comment(task.id, 'b');
      for (let i = 0; i < 2; i++) await createTask(project);
      const taskCursor = (await project.api.get('/api/v1/tasks?limit=1').expect(200)).body.nextCursor;
      for (const query of [`cursor=${encodeURIComponent(taskCursor)}`, 'cursor=nonsense']) {
        expect((await project.api.get(`${comments(task.id)}?${query}`).expect(400)).body.code).toBe('invalid_cursor');
      }
      for (const query of ['limit=0', 'limit=101', 'limit=x']) {
        expect((await project.api.get(`${comments(task.id)}?${query}`).expect(400)).body).toMatchObject({ code: 'validation_failed' });
      }
      expect((await project.api.get(`${comments(task.id)}?sort=rank`).expect(400)).body.code).toBe('unknown_field');
    });

    it('refuses a cursor of one task’s comments in another task’s list: 400 invalid_cursor; the same task takes it with another limit', async () => {
      const [task, second] = [await createTask(project), await createTask(project)];
      for (const body of ['a', 'b', 'c']) {
        await comment(task.id, body);
        await comment(second.id, body);
      }
      const { nextCursor } = (await project.api.get(`${comments(task.id)}?limit=1`).expect(200)).body;
      const res = await project.api.get(`${comments(second.id)}?limit=1&cursor=${encodeURIComponent(nextCursor)}`).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_cursor', errors: [{ field: 'cursor' }] });
      const page = (await project.api.get(`${comments(task.id)}?limit=2&cursor=${encodeURIComponent(nextCursor)}`).expect(200)).body;
      expect(page.comments.map((found: Json) => found.body)).toEqual(['b', 'c']);
      expect(page.nextCursor).toBeNull();
    });

    it('answers 404 for a comment of another task or of another project, and for a task that is absent or of another project', async () => {
      const [task, second] = [await createTask(project), await createTask(project)];
      const mine = await comment(task.id, 'Mine');
      const othersTask = await createTask(other);
      const theirs = await comment(othersTask.id, 'Theirs', {}, other.api);
      await project.api.get(one(second.id, mine.id)).expect(404);
      await project.api.get(one(othersTask.id, theirs.id)).expect(404);
      await project.api.get(one(task.id, theirs.id)).expect(404);
      await project.api.get(one(task.id, NO_SUCH_ID)).expect(404);
      await project.api.get(one(task.id, 'not-a-uuid')).expect(404);
      await project.api.get(`${one(second.id, mine.id)}/revisions`).expect(404);
      await project.api.get(comments(othersTask.id)).expect(404);
      await project.api.get(comments(NO_SUCH_ID)).expect(404);
      await project.api.post(comments(othersTask.id), { body: 'Intruder' }).expect(404);
      await project.api.patch(one(othersTask.id, theirs.id), { body: 'Intruder' }).expect(404);
      await project.api.delete(one(othersTask.id, theirs.id)).expect(404);
      await project.api.patch(one(second.id, mine.id), { body: 'Wrong task' }).expect(404);
      await project.api.delete(one(second.id, mine.id)).expect(404);
      expect((await project.api.get(one(task.id, mine.id)).expect(200)).body.comment.body).toBe('Mine');
      expect((await other.api.get(one(othersTask.id, theirs.id)).expect(200)).body.comment.body).toBe('Theirs');
    });
  });

  describe('the body', () => {
    it('takes 1 to 10 000 code points: 10 000 emoji are valid, 10 001 characters are not', async () => {
      const task = await createTask(project);
      expect((await comment(task.id, '😀'.repeat(10_000))).body).toBe('😀'.repeat(10_000));
      const res = await project.api.post(comments(task.id), { body: 'x'.repeat(10_001) }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'body' }] });
    });

    it('refuses a body that is empty, only white space, absent, null or not a string: 400 validation_failed naming body, nothing created', async () => {
      const task = await createTask(project);
      for (const body of [{ body: '' }, { body: ' \n\t ' }, {}, { body: null }, { body: 42 }, { body: ['a'] }]) {
        const res = await project.api.post(comments(task.id), body).expect(400);
        expect([body, res.body.code, res.body.errors[0].field]).toEqual([body, 'validation_failed', 'body']);
      }
      const mine = await comment(task.id, 'Kept');
      for (const body of [{ body: '' }, { body: '   ' }, { body: null }, { body: 'x'.repeat(10_001) }]) {
        const res = await project.api.patch(one(task.id, mine.id), body).expect(400);
        expect([body, res.body.code, res.body.errors[0].field]).toEqual([body, 'validation_failed', 'body']);
      }
      expect(await commentRows(task.id)).toBe(1);
    });

    it('refuses an unknown field (400 unknown_field) and a lone surrogate (400 validation_failed naming body)', async () => {
      const task = await createTask(project);
      expect((await project.api.post(comments(task.id), { body: 'Hi', colour: 'red' }).expect(400)).body).toMatchObject({
        code: 'unknown_field',
        errors: [{ field: 'colour' }],
      });
      const surrogate = await project.api
        .post(comments(task.id), '{"body":"half \\ud800 of a pair"}')
        .set('Content-Type', 'application/json')
        .expect(400);
      expect(surrogate.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'body' }] });
      const mine = await comment(task.id, 'Kept');
      const patched = await project.api.patch(one(task.id, mine.id), '{"body":"\\udfff"}').set('Content-Type', 'application/json').expect(400);
      expect(patched.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'body' }] });
      expect((await project.api.patch(one(task.id, mine.id), { body: 'x', author: 'me' }).expect(400)).body.code).toBe('unknown_field');
      expect(await commentRows(task.id)).toBe(1);
    });
  });

  describe('mentions', () => {
    it('answers each member mentioned once, in order of first appearance, with its current name', async () => {
      const task = await createTask(project);
      const [ada, grace] = project.members;
      const body = `Hi <@${grace.membershipId}>, see what <@${ada.membershipId}> wrote. Thanks <@${grace.membershipId}>!`;
      const created = await comment(task.id, body);
      expect(created.body).toBe(body);
      expect(created.mentions).toEqual([
        { membershipId: grace.membershipId, name: grace.name },
        { membershipId: ada.membershipId, name: ada.name },
      ]);
      await asAdmin(t).patch(`/admin/v1/members/${grace.membershipId}`, { name: 'Grace B. Hopper' }).expect(200);
      const read = (await project.api.get(one(task.id, created.id)).expect(200)).body.comment;
      expect(read.mentions[0]).toEqual({ membershipId: grace.membershipId, name: 'Grace B. Hopper' });
      await asAdmin(t).patch(`/admin/v1/members/${grace.membershipId}`, { name: grace.name }).expect(200);
    });

    it('reads any other text in angle brackets as plain text', async () => {
      const task = await createTask(project);
      const [ada] = project.members;
      const id = ada.membershipId;
      const plain = [
        '<@not-a-uuid>',
        `<@ ${id}>`,
        `<${id}>`,
        `<@${id}x>`,
        `<@${id.slice(0, -1)}>`,
        `@${id}`,
        `<@@${id} >`,
        '<b>bold</b> and <@> and <@!123>',
        `&lt;@${id}&gt;`,
      ].join(' ');
      const created = await comment(task.id, plain);
      expect(created.mentions).toEqual([]);
      expect(created.body).toBe(plain);
      // A UUID in capitals is a UUID: it names the member by its id.
      expect((await comment(task.id, `<@${id.toUpperCase()}>`)).mentions).toEqual([{ membershipId: id, name: ada.name }]);
    });

    it('refuses a mention of someone who is not a member of the project: 400 validation_failed naming body, nothing written', async () => {
      const task = await createTask(project);
      const before = await lastSequence();
      for (const stranger of [NO_SUCH_ID, other.members[0].membershipId]) {
        const res = await project.api.post(comments(task.id), { body: `Hello <@${project.members[0].membershipId}> and <@${stranger}>` }).expect(400);
        expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'body', message: expect.stringContaining(stranger) }] });
      }
      const mine = await comment(task.id, 'Plain');
      const res = await project.api.patch(one(task.id, mine.id), { body: `Now <@${NO_SUCH_ID}>` }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'body' }] });
      expect((await project.api.get(one(task.id, mine.id)).expect(200)).body.comment.body).toBe('Plain');
      expect(await commentRows(task.id)).toBe(1);
      expect((await events()).filter((event) => event.sequence > before).map((event) => event.type)).toEqual(['comment.created']);
    });

    it('takes 50 distinct members, the same one any number of times, and refuses 51 distinct: 400 validation_failed naming body', async () => {
      const crowd = await createProject(t, 'Fifty members');
      const admin = asAdmin(t);
      for (let i = crowd.members.length; i < 51; i++) {
        crowd.members.push((await admin.post(`/admin/v1/projects/${crowd.id}/members`, { name: `Member ${i}` }).expect(201)).body.member);
      }
      const task = await createTask(crowd);
      const mention = (members: Json[]) => members.map((member) => `<@${member.membershipId}>`).join(' ');
      const fifty = await comment(task.id, mention(crowd.members.slice(0, 50)), {}, crowd.api);
      expect(fifty.mentions.map((member: Json) => member.membershipId)).toEqual(crowd.members.slice(0, 50).map((member) => member.membershipId));
      const again = await comment(task.id, mention(Array(60).fill(crowd.members[50])), {}, crowd.api);
      expect(again.mentions).toHaveLength(1);
      const res = await crowd.api.post(comments(task.id), { body: mention(crowd.members) }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'body', message: expect.stringContaining('at most 50') }] });
      await crowd.api.patch(one(task.id, fifty.id), { body: mention(crowd.members) }).expect(400);
    });

    it('follows the text: an edit answers the mentions of the new text', async () => {
      const task = await createTask(project);
      const [ada, grace] = project.members;
      const created = await comment(task.id, `<@${ada.membershipId}>`);
      const edited = (await project.api.patch(one(task.id, created.id), { body: `<@${grace.membershipId}> only` }).expect(200)).body.comment;
      expect(edited.mentions).toEqual([{ membershipId: grace.membershipId, name: grace.name }]);
    });
  });

  describe('replies', () => {
    it('replies to a top-level comment of the same task; parentId null is a top-level comment', async () => {
      const task = await createTask(project);
      const top = await comment(task.id, 'Top', { parentId: null });
      expect(top.parentId).toBeNull();
      const reply = await comment(task.id, 'Reply', { parentId: top.id });
      expect(reply).toMatchObject({ parentId: top.id, taskId: task.id });
    });

    it('refuses a reply to a reply: 400 nesting_too_deep naming parentId', async () => {
      const task = await createTask(project);
      const top = await comment(task.id, 'Top');
      const reply = await comment(task.id, 'Reply', { parentId: top.id });
      const res = await project.api.post(comments(task.id), { body: 'Too deep', parentId: reply.id }).expect(400);
      expect(res.body).toMatchObject({ code: 'nesting_too_deep', errors: [{ field: 'parentId' }] });
      expect(await commentRows(task.id)).toBe(2);
    });

    it('answers 404 for a parentId of another task, of another project, absent or not a UUID', async () => {
      const [task, second] = [await createTask(project), await createTask(project)];
      const elsewhere = await comment(second.id, 'On another task');
      const othersTask = await createTask(other);
      const theirs = await comment(othersTask.id, 'Theirs', {}, other.api);
      for (const parentId of [elsewhere.id, theirs.id, NO_SUCH_ID, 'not-a-uuid']) {
        const res = await project.api.post(comments(task.id), { body: 'Reply', parentId }).expect(404);
        expect([parentId, res.body.code, res.body.errors?.[0]?.field]).toEqual([parentId, 'not_found', 'parentId']);
      }
      expect(await commentRows(task.id)).toBe(0);
    });
  });

  describe('who may change a comment', () => {
    it('needs comments:write to comment: 403 insufficient_permission naming it, before the body is looked at', async () => {
      const task = await createTask(project);
      const moderator = await project.issueKey(['content:moderate'], 'Moderator only');
      for (const key of [await project.issueKey(['tasks:create', 'tasks:edit'], 'No comments'), moderator]) {
        const res = await key.api.post(comments(task.id), { nonsense: true }).expect(403);
        expect(res.body).toMatchObject({ code: 'insufficient_permission', requiredPermission: 'comments:write' });
      }
      expect(await commentRows(task.id)).toBe(0);
    });

    it('lets the key that wrote a comment edit and delete it', async () => {
      const task = await createTask(project);
      const writer = await project.issueKey(['comments:write'], 'Writer');
      const mine = await comment(task.id, 'Mine', {}, writer.api);
      expect((await writer.api.patch(one(task.id, mine.id), { body: 'Mine, edited' }).expect(200)).body.comment.body).toBe('Mine, edited');
      await writer.api.delete(one(task.id, mine.id)).expect(204);
    });

    it('refuses another key with only comments:write: 403 insufficient_permission requiredPermission content:moderate, nothing changes', async () => {
      const task = await createTask(project);
      const mine = await comment(task.id, 'Mine');
      const stranger = await project.issueKey(['comments:write', 'tasks:edit', 'tasks:delete'], 'Stranger');
      const before = await lastSequence();
      for (const res of [await stranger.api.patch(one(task.id, mine.id), { body: 'Not yours' }), await stranger.api.delete(one(task.id, mine.id))]) {
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'insufficient_permission', requiredPermission: 'content:moderate' });
      }
      expect((await project.api.get(one(task.id, mine.id)).expect(200)).body.comment).toEqual(mine);
      expect(await lastSequence()).toBe(before);
    });

    it('lets a moderator edit and delete anyone’s comment; the revision it writes is the moderator’s, the comment keeps its author', async () => {
      const task = await createTask(project);
      const mine = await comment(task.id, 'Mine');
      const moderator = await project.issueKey(['content:moderate'], 'Moderator');
      const edited = (await moderator.api.patch(one(task.id, mine.id), { body: 'Moderated' }).expect(200)).body.comment;
      expect(edited.author).toEqual(mine.author);
      const { revisions } = (await project.api.get(`${one(task.id, mine.id)}/revisions`).expect(200)).body;
      expect(revisions.map((revision: Json) => [revision.number, revision.body, revision.author.name])).toEqual([
        [2, 'Moderated', 'Moderator (API)'],
        [1, 'Mine', 'Test key (API)'],
      ]);
      expect(revisions[0].author.keyId).toBe(moderator.id);
      await moderator.api.delete(one(task.id, mine.id)).expect(204);
      await project.api.get(one(task.id, mine.id)).expect(404);
    });

    it('checks in order: 403 without comments:write or content:moderate, 400 for the body, 404 for the comment, 403 for another’s comment, then 412', async () => {
      const task = await createTask(project);
      const mine = await comment(task.id, 'Mine');
      const reader = await project.issueKey(['tasks:edit'], 'Neither');
      for (const res of [await reader.api.patch(one(task.id, NO_SUCH_ID), { nonsense: true }), await reader.api.delete(one(task.id, NO_SUCH_ID))]) {
        expect([res.status, res.body.requiredPermission]).toEqual([403, 'comments:write']);
      }
      const stranger = await project.issueKey(['comments:write'], 'Stranger in order');
      expect((await stranger.api.patch(one(task.id, mine.id), { body: '' }).expect(400)).body.code).toBe('validation_failed');
      expect((await stranger.api.patch(one(task.id, mine.id), { body: `<@${NO_SUCH_ID}>` }).expect(400)).body.code).toBe('validation_failed');
      expect((await stranger.api.patch(one(task.id, NO_SUCH_ID), { body: 'x' }).expect(404)).body.code).toBe('not_found');
      const forbidden = await stranger.api.patch(one(task.id, mine.id), { body: 'x' }).set('If-Match', '"stale"').expect(403);
      expect(forbidden.body.requiredPermission).toBe('content:moderate');
      expect((await project.api.patch(one(task.id, mine.id), { body: 'x' }).set('If-Match', '"stale"').expect(412)).body.code).toBe(
        'precondition_failed',
      );
    });
  });

  describe('revisions and edits', () => {
    it('an edit sets editedAt and updatedAt, keeps the previous text as a revision, and records comment.updated with changes', async () => {
      const task = await createTask(project);
      const created = await comment(task.id, 'Before');
      const before = await lastSequence();
      const edited = (await project.api.patch(one(task.id, created.id), { body: 'After' }).expect(200)).body.comment;
      expect(edited).toEqual({ ...created, body: 'After', editedAt: expect.stringMatching(ISO_TIMESTAMP), updatedAt: edited.editedAt });
      expect(edited.editedAt > created.createdAt).toBe(true);
      const [event, ...more] = (await events()).filter((found) => found.sequence > before);
      expect(more).toEqual([]);
      expect(event).toMatchObject({ type: 'comment.updated', actor: 'Test key (API)', occurredAt: edited.updatedAt });
      expect(event.data).toEqual({ comment: edited, changes: [{ field: 'body', from: 'Before', to: 'After' }] });
    });

    it('the same body changes nothing: 200 with the comment as it was, no revision, no event, updatedAt unchanged', async () => {
      const task = await createTask(project);
      const created = await comment(task.id, 'Same');
      const before = await lastSequence();
      const res = await project.api.patch(one(task.id, created.id), { body: 'Same' }).expect(200);
      expect(res.body).toEqual({ comment: created });
      expect(res.headers.etag).toBe((await project.api.get(one(task.id, created.id)).expect(200)).headers.etag);
      expect((await project.api.get(`${one(task.id, created.id)}/revisions`).expect(200)).body.revisions).toHaveLength(1);
      expect(await lastSequence()).toBe(before);
    });

    it('refuses parentId in a PATCH (400 read_only_field) and an empty PATCH (400 empty_body)', async () => {
      const task = await createTask(project);
      const top = await comment(task.id, 'Top');
      const reply = await comment(task.id, 'Reply', { parentId: top.id });
      for (const parentId of [null, top.id]) {
        const res = await project.api.patch(one(task.id, reply.id), { body: 'Moved', parentId }).expect(400);
        expect(res.body).toMatchObject({ code: 'read_only_field', errors: [{ field: 'parentId' }] });
      }
      expect((await project.api.patch(one(task.id, reply.id), {}).expect(400)).body.code).toBe('empty_body');
      expect((await project.api.get(one(task.id, reply.id)).expect(200)).body.comment).toEqual(reply);
    });

    it('lists revisions newest first: number 1 the original, the highest the current text, each with its author and time', async () => {
      const task = await createTask(project);
      const created = await comment(task.id, 'One');
      const editor = await project.issueKey(['content:moderate'], 'Editor');
      const second = (await editor.api.patch(one(task.id, created.id), { body: 'Two' }).expect(200)).body.comment;
      await project.api.patch(one(task.id, created.id), { body: 'Two' }).expect(200);
      const third = (await project.api.patch(one(task.id, created.id), { body: 'Three' }).expect(200)).body.comment;
      const { revisions } = (await project.api.get(`${one(task.id, created.id)}/revisions`).expect(200)).body;
      expect(revisions).toEqual([
        { number: 3, body: 'Three', author: created.author, createdAt: third.editedAt },
        { number: 2, body: 'Two', author: { keyId: editor.id, name: 'Editor (API)' }, createdAt: second.editedAt },
        { number: 1, body: 'One', author: created.author, createdAt: created.createdAt },
      ]);
      expect(third.body).toBe(revisions[0].body);
    });
  });

  describe('deletion and tombstones', () => {
    it('destroys a comment and its revisions: 204, then 404; comment.deleted carries {id, taskId, parentId}', async () => {
      const task = await createTask(project);
      const top = await comment(task.id, 'Top');
      const reply = await comment(task.id, 'Reply', { parentId: top.id });
      await project.api.patch(one(task.id, reply.id), { body: 'Reply, edited' }).expect(200);
      const before = await lastSequence();
      await project.api.delete(one(task.id, reply.id)).expect(204);
      await project.api.get(one(task.id, reply.id)).expect(404);
      await project.api.get(`${one(task.id, reply.id)}/revisions`).expect(404);
      await project.api.delete(one(task.id, reply.id)).expect(404);
      expect(await t.prisma.commentRevision.count({ where: { commentId: reply.id } })).toBe(0);
      const [event, ...more] = (await events()).filter((found) => found.sequence > before);
      expect(more).toEqual([]);
      expect(event).toMatchObject({ type: 'comment.deleted', data: { comment: { id: reply.id, taskId: task.id, parentId: top.id } } });
      expect(Object.keys(event.data.comment).sort()).toEqual(['id', 'parentId', 'taskId']);
      expect((await project.api.get(comments(task.id)).expect(200)).body).toMatchObject({ total: 1, comments: [top] });
    });

    it('keeps a deleted top-level comment with replies as a tombstone: deleted, no body, no mentions, no revisions, updatedAt the deletion’s time, counted in total', async () => {
      const task = await createTask(project);
      const top = await comment(task.id, `Top <@${project.members[0].membershipId}>`);
      await project.api.patch(one(task.id, top.id), { body: 'Top, edited' }).expect(200);
      const edited = (await project.api.get(one(task.id, top.id)).expect(200)).body.comment;
      const reply = await comment(task.id, 'Reply', { parentId: top.id });
      const before = await lastSequence();
      await project.api.delete(one(task.id, top.id)).expect(204);
      const deletion = (await events()).filter((found) => found.sequence > before);
      expect(deletion.map((event) => [event.type, event.data])).toEqual([
        ['comment.deleted', { comment: { id: top.id, taskId: task.id, parentId: null } }],
      ]);
      const tombstone = (await project.api.get(one(task.id, top.id)).expect(200)).body.comment;
      expect(tombstone).toEqual({ ...edited, deleted: true, body: null, mentions: [], updatedAt: deletion[0].occurredAt });
      expect((await project.api.get(`${one(task.id, top.id)}/revisions`).expect(200)).body).toEqual({ revisions: [] });
      expect(await t.prisma.commentRevision.count({ where: { commentId: top.id } })).toBe(0);
      const list = (await project.api.get(comments(task.id)).expect(200)).body;
      expect(list).toMatchObject({ total: 2, comments: [tombstone, reply] });
    });

    it('answers 404 to a PATCH, a DELETE and a new reply naming a tombstone', async () => {
      const task = await createTask(project);
      const top = await comment(task.id, 'Top');
      await comment(task.id, 'Reply', { parentId: top.id });
      await project.api.delete(one(task.id, top.id)).expect(204);
      await project.api.patch(one(task.id, top.id), { body: 'Back' }).expect(404);
      await project.api.delete(one(task.id, top.id)).expect(404);
      expect((await project.api.post(comments(task.id), { body: 'Late', parentId: top.id }).expect(404)).body.errors[0].field).toBe('parentId');
      expect((await project.api.get(comments(task.id)).expect(200)).body.total).toBe(2);
    });

    it('removes a tombstone, with no event of its own, when its last reply goes', async () => {
      const task = await createTask(project);
      const top = await comment(task.id, 'Top');
      const [first, second] = [await comment(task.id, 'One', { parentId: top.id }), await comment(task.id, 'Two', { parentId: top.id })];
      await project.api.delete(one(task.id, top.id)).expect(204);
      await project.api.delete(one(task.id, first.id)).expect(204);
      expect((await project.api.get(one(task.id, top.id)).expect(200)).body.comment.deleted).toBe(true);
      const before = await lastSequence();
      await project.api.delete(one(task.id, second.id)).expect(204);
      await project.api.get(one(task.id, top.id)).expect(404);
      expect((await project.api.get(comments(task.id)).expect(200)).body).toEqual({ comments: [], nextCursor: null, total: 0 });
      const after = (await events()).filter((found) => found.sequence > before);
      expect(after.map((event) => [event.type, event.data.comment.id])).toEqual([['comment.deleted', second.id]]);
    });

    it('destroys a top-level comment without replies outright, and leaves a live parent when its reply goes', async () => {
      const task = await createTask(project);
      const [alone, parent] = [await comment(task.id, 'Alone'), await comment(task.id, 'Parent')];
      const reply = await comment(task.id, 'Reply', { parentId: parent.id });
      await project.api.delete(one(task.id, alone.id)).expect(204);
      await project.api.get(one(task.id, alone.id)).expect(404);
      await project.api.delete(one(task.id, reply.id)).expect(204);
      expect((await project.api.get(comments(task.id)).expect(200)).body).toMatchObject({ total: 1, comments: [parent] });
    });
  });

  describe('the trash', () => {
    it('sends comments to the trash with their task and brings them back, with no event per comment; their routes answer 404 meanwhile', async () => {
      const task = await createTask(project);
      const top = await comment(task.id, 'Top');
      const reply = await comment(task.id, 'Reply', { parentId: top.id });
      const before = (await project.api.get(comments(task.id)).expect(200)).body;
      const at = await lastSequence();
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      await project.api.get(comments(task.id)).expect(404);
      await project.api.get(one(task.id, top.id)).expect(404);
      await project.api.get(`${one(task.id, top.id)}/revisions`).expect(404);
      await project.api.post(comments(task.id), { body: 'While trashed' }).expect(404);
      await project.api.post(comments(task.id), { body: 'While trashed', parentId: top.id }).expect(404);
      await project.api.patch(one(task.id, reply.id), { body: 'While trashed' }).expect(404);
      await project.api.delete(one(task.id, reply.id)).expect(404);
      await project.api.post(`/api/v1/trash/${task.id}/restore`).expect(200);
      expect((await project.api.get(comments(task.id)).expect(200)).body).toEqual(before);
      expect((await events()).filter((event) => event.sequence > at).map((event) => event.type)).toEqual(['task.deleted', 'task.restored']);
    });

    it('destroys the comments, their revisions and mentions with a purge of their task (and of its subtasks)', async () => {
      const task = await createTask(project);
      const subtask = await createTask(project, { parentId: task.id });
      const top = await comment(task.id, `Top <@${project.members[0].membershipId}>`);
      await comment(task.id, 'Reply', { parentId: top.id });
      await comment(subtask.id, 'On the subtask');
      await project.api.delete(`/api/v1/tasks/${task.id}`).expect(204);
      await project.api.delete(`/api/v1/trash/${task.id}`).expect(204);
      expect(await t.prisma.comment.count({ where: { taskId: { in: [task.id, subtask.id] } } })).toBe(0);
      expect(await t.prisma.commentRevision.count({ where: { commentId: top.id } })).toBe(0);
      expect(await t.prisma.commentMention.count({ where: { commentId: top.id } })).toBe(0);
    });
  });

  describe('HTTP conventions', () => {
    it('honours If-Match on PATCH and DELETE: 412 with the current ETag, nothing changes; the right tag or * applies', async () => {
      const task = await createTask(project);
      const created = await comment(task.id, 'Tagged');
      const { etag } = (await project.api.get(one(task.id, created.id)).expect(200)).headers;
      for (const res of [
        await project.api.patch(one(task.id, created.id), { body: 'Changed' }).set('If-Match', '"stale"'),
        await project.api.delete(one(task.id, created.id)).set('If-Match', '"stale"'),
      ]) {
        expect([res.status, res.body.code, res.headers.etag]).toEqual([412, 'precondition_failed', etag]);
      }
      expect((await project.api.get(one(task.id, created.id)).expect(200)).body.comment.body).toBe('Tagged');
      const patched = await project.api.patch(one(task.id, created.id), { body: 'Changed' }).set('If-Match', etag).expect(200);
      expect(patched.headers.etag).toBe((await project.api.get(one(task.id, created.id)).expect(200)).headers.etag);
      await project.api.delete(one(task.id, created.id)).set('If-Match', etag).expect(412);
      await project.api.delete(one(task.id, created.id)).set('If-Match', patched.headers.etag).expect(204);
      const star = await comment(task.id, 'Star');
      await project.api.delete(one(task.id, star.id)).set('If-Match', '*').expect(204);
    });

    it('answers 304 to If-None-Match with the current ETag, for a comment, a list and revisions', async () => {
      const task = await createTask(project);
      const created = await comment(task.id, 'Cached');
      for (const path of [one(task.id, created.id), comments(task.id), `${one(task.id, created.id)}/revisions`]) {
        const { etag } = (await project.api.get(path).expect(200)).headers;
        await project.api.get(path).set('If-None-Match', etag).expect(304);
      }
      const { etag } = (await project.api.get(comments(task.id)).expect(200)).headers;
      await comment(task.id, 'New');
      await project.api.get(comments(task.id)).set('If-None-Match', etag).expect(200);
    });

    it('replays an Idempotency-Key: the same answer byte for byte, no second comment, no second event', async () => {
      const task = await createTask(project);
      const first = await project.api.post(comments(task.id), { body: 'Once' }).set('Idempotency-Key', 'comment-once').expect(201);
      const at = await lastSequence();
      const again = await project.api.post(comments(task.id), { body: 'Once' }).set('Idempotency-Key', 'comment-once').expect(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(again.headers.location).toBe(first.headers.location);
      expect(await commentRows(task.id)).toBe(1);
      expect(await lastSequence()).toBe(at);
      await project.api.post(comments(task.id), { body: 'Other' }).set('Idempotency-Key', 'comment-once').expect(422);
      const id = first.body.comment.id;
      await project.api.delete(one(task.id, id)).set('Idempotency-Key', 'comment-delete').expect(204);
      await project.api.delete(one(task.id, id)).set('Idempotency-Key', 'comment-delete').expect(204);
    });
  });

  describe('events', () => {
    it('records comment.created, comment.updated and comment.deleted in the feed with their data, and in the stream and webhooks by their types', async () => {
      const own = await createProject(t, 'Comment events');
      const task = await createTask(own);
      const at = await lastSequence(own);
      const receiver = await startReceiver();
      const stream = await openEventStream(await baseUrl(), own.key, { query: 'types=comment.created,comment.deleted' });
      try {
        await own.api.post('/api/v1/webhooks', { url: receiver.url, events: ['comment.updated', 'comment.deleted'] }).expect(201);
        const created = await comment(task.id, 'Hello', {}, own.api);
        const edited = (await own.api.patch(one(task.id, created.id), { body: 'Hello again' }).expect(200)).body.comment;
        await own.api.delete(one(task.id, created.id)).expect(204);
        const feed = (await events(own)).filter((event) => event.sequence > at);
        expect(feed.map((event) => [event.type, event.actor])).toEqual([
          ['comment.created', 'Test key (API)'],
          ['comment.updated', 'Test key (API)'],
          ['comment.deleted', 'Test key (API)'],
        ]);
        expect(feed[0].data).toEqual({ comment: created });
        expect(feed[0].occurredAt).toBe(created.createdAt);
        expect(feed[1].data).toEqual({ comment: edited, changes: [{ field: 'body', from: 'Hello', to: 'Hello again' }] });
        expect(feed[2].data).toEqual({ comment: { id: created.id, taskId: task.id, parentId: null } });
        const filtered = (await own.api.get(`/api/v1/events?after=${at}&types=comment.updated,comment.deleted`).expect(200)).body.events;
        expect(filtered).toEqual(feed.slice(1));
        const streamed = await stream.waitForEvents(2);
        expect(streamed.map((message) => [message.event, JSON.parse(message.data)])).toEqual([
          ['comment.created', feed[0]],
          ['comment.deleted', feed[2]],
        ]);
        const delivered = await receiver.waitFor(2);
        expect(delivered.map((request) => JSON.parse(request.body))).toEqual(feed.slice(1));
      } finally {
        stream.close();
        await receiver.close();
      }
    });

    it('leaves the task’s updatedAt and history untouched, and writes no task event', async () => {
      const task = await createTask(project);
      const history = (await project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200)).body;
      const at = await lastSequence();
      const created = await comment(task.id, 'Quiet');
      const reply = await comment(task.id, 'Reply', { parentId: created.id });
      await project.api.patch(one(task.id, created.id), { body: 'Still quiet' }).expect(200);
      await project.api.delete(one(task.id, created.id)).expect(204);
      await project.api.delete(one(task.id, reply.id)).expect(204);
      const now = (await project.api.get(`/api/v1/tasks/${task.id}`).expect(200)).body.task;
      expect(now.updatedAt).toBe(task.updatedAt);
      expect((await project.api.get(`/api/v1/tasks/${task.id}/history`).expect(200)).body).toEqual(history);
      expect((await events()).filter((event) => event.sequence > at).every((event) => event.type.startsWith('comment.'))).toBe(true);
    });
  });
});
