/**
 * Mirrors one project into a local JSON file and keeps it current from the event stream
 * (docs/events.md, "Keeping a mirror"):
 *
 *   TASKS_API_URL=http://localhost:3000 TASKS_API_KEY=tsk_... MIRROR_FILE=mirror.json npx tsx examples/mirror.ts
 *
 * On a first run it reads the feed's last sequence, then loads the members, labels, sprints,
 * tasks and trash from the lists, then opens GET /api/v1/events/stream after that sequence and
 * applies every event it brings. A change made while the lists were read is in the stream,
 * whether or not the lists showed it: none is missed, and one the lists already showed is applied
 * again harmlessly, since each event carries the resource as it was right after its change and
 * the events that follow put an older copy right. Tasks are stored with the ids of what they show (assignee, labels,
 * sprint, dependencies) and shown joined, so a renamed label or a finished blocker shows in
 * every task at once. Each live task's comments are loaded too and kept from the comment events
 * (decisions.md section 23): a deleted top-level comment with replies becomes a tombstone, which
 * goes with its last reply (that takes no event of its own); comments go to the trash and back
 * with their task (reloaded when it comes back, no event per comment) and go with its purge;
 * mentions show the members' current names. Attachments' metadata (decisions.md section 24) is
 * kept the same way, from attachment.created and attachment.deleted: loaded with each live task,
 * reloaded when it comes back from the trash, gone with its purge (the bytes stay on the service:
 * GET .../content, or the attachment's downloadUrl, which a mirror does not keep since it expires). The file records the id of the last event applied: a later run resumes
 * from it with Last-Event-ID, and so does a reconnection. It runs until SIGTERM or SIGINT.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { renameSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createClient,
  type AttachmentDto,
  type AttachmentEventDto,
  type CommentDto,
  type DeletedAttachmentDto,
  type DeletedCommentDto,
  type TasksApi,
  type EventDto,
  type LabelDto,
  type MemberDto,
  type SprintDto,
  type TaskDetailDto,
  type TrashedTaskDto,
} from '../clients/typescript';

/** A task as stored: its own fields, and the ids of what it shows. */
type StoredTask = Omit<TaskDetailDto, 'assignee' | 'labels' | 'sprint' | 'blocked' | 'dependencies'> & {
  assigneeId: string | null;
  labelIds: string[];
  sprintId: string | null;
  deletedAt?: string;
};

/** A comment as stored: its own fields, and the ids of the members it mentions (their names are joined when shown). */
type StoredComment = Omit<CommentDto, 'mentions'> & { mentionIds: string[] };

interface Store {
  /** The id (sequence) of the last event applied; null before the first. */
  lastEventId: string | null;
  members: Record<string, MemberDto>;
  labels: Record<string, LabelDto>;
  sprints: Record<string, SprintDto>;
  tasks: Record<string, StoredTask>;
  trash: Record<string, StoredTask>;
  /** [task, the task that blocks it], oldest first: kept while either end is in the trash, gone with a purge. */
  dependencies: [string, string][];
  /** Comments by id, of live tasks and of tasks in the trash (kept there with them). */
  comments: Record<string, StoredComment>;
  /** Attachments' metadata by id, of live tasks and of tasks in the trash (kept there with them). */
  attachments: Record<string, AttachmentEventDto>;
}

const FINISHED = new Set(['done', 'cancelled']);

/**
 * Loads everything from the lists (a first run, or a position the feed no longer has), as of the
 * feed's last sequence read before them: the stream resumes after it, also when the first
 * connection breaks before any event came.
 */
async function load(api: TasksApi): Promise<Store> {
  const lastEventId = String(await lastSequence(api));
  const store: Store = { lastEventId, members: {}, labels: {}, sprints: {}, tasks: {}, trash: {}, dependencies: [], comments: {}, attachments: {} };
  const members = await ok(api.GET('/api/v1/members'));
  for (const member of members.members) store.members[member.membershipId] = member;
  for (const label of (await ok(api.GET('/api/v1/labels'))).labels) store.labels[label.id] = label;
  for (const sprint of (await ok(api.GET('/api/v1/sprints'))).sprints) store.sprints[sprint.id] = sprint;
  for (let cursor: string | undefined, first = true; first || cursor; first = false) {
    const page = await ok(api.GET('/api/v1/trash', { params: { query: { limit: 100, cursor } } }));
    for (const task of page.tasks) store.trash[task.id] = stored(task);
    cursor = page.nextCursor ?? undefined;
  }
  for (let cursor: string | undefined, first = true; first || cursor; first = false) {
    const page = await ok(api.GET('/api/v1/tasks', { params: { query: { limit: 100, cursor } } }));
    // The list leaves dependencies out: each task's own answer has them.
    for (const { id } of page.tasks) {
      keepTask(store, (await ok(api.GET('/api/v1/tasks/{taskId}', { params: { path: { taskId: id } } }))).task);
      await loadComments(api, store, id);
      await loadAttachments(api, store, id);
    }
    cursor = page.nextCursor ?? undefined;
  }
  return store;
}

/** A live task's comments, from its list (a task in the trash has none to read: its comments are loaded when it comes back). */
async function loadComments(api: TasksApi, store: Store, taskId: string): Promise<void> {
  for (const [id, comment] of Object.entries(store.comments)) if (comment.taskId === taskId) delete store.comments[id];
  for (let cursor: string | undefined, first = true; first || cursor; first = false) {
    const { data, response } = await api.GET('/api/v1/tasks/{taskId}/comments', { params: { path: { taskId }, query: { limit: 100, cursor } } });
    // Gone to the trash (or purged) since: its events say so, and its comments come back with it.
    if (response.status === 404 || !data) return;
    for (const comment of data.comments) keepComment(store, comment);
    cursor = data.nextCursor ?? undefined;
  }
}

/** A live task's attachments, from its list, without their download links (which expire). */
async function loadAttachments(api: TasksApi, store: Store, taskId: string): Promise<void> {
  for (const [id, attachment] of Object.entries(store.attachments)) if (attachment.taskId === taskId) delete store.attachments[id];
  const { data, response } = await api.GET('/api/v1/tasks/{taskId}/attachments', { params: { path: { taskId } } });
  // Gone to the trash (or purged) since: its events say so, and its attachments come back with it.
  if (response.status === 404 || !data) return;
  for (const attachment of data.attachments) keepAttachment(store, attachment);
}

function keepAttachment(store: Store, attachment: AttachmentDto | AttachmentEventDto): void {
  const { downloadUrl: _url, downloadUrlExpiresAt: _expires, ...metadata } = attachment as AttachmentDto;
  store.attachments[attachment.id] = metadata;
}

/** The feed's last sequence now: a read beyond the end answers it (400 with lastSequence, decisions.md section 20). */
async function lastSequence(api: TasksApi): Promise<number> {
  const { error, response } = await api.GET('/api/v1/events', { params: { query: { after: Number.MAX_SAFE_INTEGER, limit: 1 } } });
  if (response.status === 400 && error && 'lastSequence' in error && typeof error.lastSequence === 'number') return error.lastSequence;
  if (response.status === 401 || response.status === 403) throw new Error('The key was refused');
  throw new Error(`GET /api/v1/events beyond the end answered ${response.status} ${error?.code}: ${error?.detail}`);
}

/** One event of the feed, applied to the store (decisions.md sections 13, 20 and 23). */
async function apply(api: TasksApi, store: Store, event: EventDto): Promise<void> {
  const { data } = event;
  const [kind, action] = event.type.split('.');
  if (kind === 'member' && data.member) store.members[data.member.membershipId] = data.member;
  if (kind === 'label' && data.label) store.labels[data.label.id] = data.label;
  if (kind === 'sprint' && data.sprint) {
    if (action === 'deleted') delete store.sprints[data.sprint.id];
    else store.sprints[data.sprint.id] = data.sprint as SprintDto;
  }
  if (kind === 'task' && data.task) {
    const { id } = data.task;
    if (action === 'purged') {
      delete store.tasks[id];
      delete store.trash[id];
      store.dependencies = store.dependencies.filter((link) => !link.includes(id));
      for (const [commentId, comment] of Object.entries(store.comments)) if (comment.taskId === id) delete store.comments[commentId];
      for (const [attachmentId, attachment] of Object.entries(store.attachments))
        if (attachment.taskId === id) delete store.attachments[attachmentId];
    } else if (action === 'deleted') {
      delete store.tasks[id];
      store.trash[id] = stored(data.task as TrashedTaskDto);
    } else {
      keepTask(store, data.task as TaskDetailDto);
      if (action === 'dependency_removed') {
        store.dependencies = store.dependencies.filter(([blocked, blocker]) => !(blocked === id && blocker === data.blockedById));
      }
      // Its comments came back with it, with no event each: read them (the events after this one put an older copy right).
      if (action === 'restored') {
        await loadComments(api, store, id);
        await loadAttachments(api, store, id);
      }
    }
  }
  if (kind === 'comment' && data.comment) {
    if (action === 'deleted') removeComment(store, data.comment as DeletedCommentDto, event.occurredAt);
    else keepComment(store, data.comment as CommentDto);
  }
  if (kind === 'attachment' && data.attachment) {
    if (action === 'deleted') delete store.attachments[(data.attachment as DeletedAttachmentDto).id];
    else keepAttachment(store, data.attachment as AttachmentEventDto);
  }
  store.lastEventId = String(event.sequence);
}

function keepComment(store: Store, comment: CommentDto): void {
  const { mentions, ...fields } = comment;
  store.comments[comment.id] = { ...fields, mentionIds: mentions.map((member) => member.membershipId) };
}

/**
 * A comment deleted at `at`: a top-level one with replies stays as a tombstone (no text, no
 * mentions, updatedAt the deletion's time); a reply goes, and with it its parent when that is a
 * tombstone left without replies (the service sends no event for that).
 */
function removeComment(store: Store, { id, parentId }: DeletedCommentDto, at: string): void {
  const hasReplies = (commentId: string) => Object.values(store.comments).some((comment) => comment.parentId === commentId);
  const comment = store.comments[id];
  if (parentId === null && comment && hasReplies(id)) {
    store.comments[id] = { ...comment, body: null, mentionIds: [], deleted: true, updatedAt: at };
    return;
  }
  delete store.comments[id];
  if (parentId !== null && store.comments[parentId]?.deleted && !hasReplies(parentId)) delete store.comments[parentId];
}

/** A comment as the API shows it, its mentions named from the store. */
function shownComment(store: Store, comment: StoredComment): CommentDto {
  const { mentionIds, ...fields } = comment;
  return { ...fields, mentions: mentionIds.map((membershipId) => store.members[membershipId]) };
}

/**
 * A live task as its own answer shows it: its fields, and the links it shows (to live tasks).
 * Links are only ever added here; they go with task.dependency_removed and task.purged, which
 * come after any event that showed them.
 */
function keepTask(store: Store, task: TaskDetailDto): void {
  delete store.trash[task.id];
  store.tasks[task.id] = stored(task);
  for (const ref of task.dependencies.blockedBy) link(store, task.id, ref.id);
  for (const ref of task.dependencies.blocks) link(store, ref.id, task.id);
}

function link(store: Store, blocked: string, blocker: string): void {
  if (!store.dependencies.some(([a, b]) => a === blocked && b === blocker)) store.dependencies.push([blocked, blocker]);
}

function stored(task: TaskDetailDto | TrashedTaskDto): StoredTask {
  const { assignee, labels, sprint, blocked: _blocked, ...fields } = task as TaskDetailDto;
  delete (fields as Partial<TaskDetailDto>).dependencies;
  return { ...fields, assigneeId: assignee?.membershipId ?? null, labelIds: labels.map((label) => label.id), sprintId: sprint?.id ?? null };
}

/** A task as the API shows it, its embedded views joined from the store by id. */
function shown(store: Store, task: StoredTask): TaskDetailDto | TrashedTaskDto {
  const { assigneeId, labelIds, sprintId, ...fields } = task;
  const ref = (id: string) => ({ id, title: store.tasks[id].title, status: store.tasks[id].status });
  const live = (id: string) => id in store.tasks;
  const blockedBy = store.dependencies.filter(([blocked, blocker]) => blocked === task.id && live(blocker)).map(([, blocker]) => blocker);
  const blocks = store.dependencies.filter(([blocked, blocker]) => blocker === task.id && live(blocked)).map(([blocked]) => blocked);
  const sprint = sprintId ? store.sprints[sprintId] : null;
  const view = {
    ...fields,
    assignee: assigneeId ? store.members[assigneeId] : null,
    labels: labelIds.map((id) => store.labels[id]).sort((a, b) => (a.name === b.name ? compare(a.id, b.id) : compare(a.name, b.name))),
    sprint: sprint ? { id: sprint.id, name: sprint.name, status: sprint.status } : null,
    blocked: blockedBy.some((id) => !FINISHED.has(store.tasks[id].status)),
  };
  return task.deletedAt ? (view as TrashedTaskDto) : { ...view, dependencies: { blockedBy: blockedBy.map(ref), blocks: blocks.map(ref) } };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The file: the store, and the tasks as the API shows them (newest first), for whoever reads the mirror. */
function save(file: string, store: Store): void {
  const byNewest = (a: StoredTask, b: StoredTask) => compare(b.createdAt, a.createdAt) || compare(b.id, a.id);
  const view = {
    tasks: Object.values(store.tasks)
      .sort(byNewest)
      .map((task) => shown(store, task)),
    trash: Object.values(store.trash)
      .sort(byNewest)
      .map((task) => shown(store, task)),
    // Each live task's comments, oldest first, as its comment list shows them.
    comments: Object.fromEntries(
      Object.keys(store.tasks).map((taskId) => [
        taskId,
        Object.values(store.comments)
          .filter((comment) => comment.taskId === taskId)
          .sort((a, b) => compare(a.createdAt, b.createdAt) || compare(a.id, b.id))
          .map((comment) => shownComment(store, comment)),
      ]),
    ),
    // Each live task's attachments, oldest first, as their list shows them (without download links).
    attachments: Object.fromEntries(
      Object.keys(store.tasks).map((taskId) => [
        taskId,
        Object.values(store.attachments)
          .filter((attachment) => attachment.taskId === taskId)
          .sort((a, b) => compare(a.createdAt, b.createdAt) || compare(a.id, b.id)),
      ]),
    ),
  };
  writeFileSync(`${file}.tmp`, JSON.stringify({ ...store, view }, null, 2));
  renameSync(`${file}.tmp`, file);
}

/**
 * The events of one connection to the stream, applied as they come, one after the other, until it
 * ends; answers the reconnection delay it asked for.
 */
async function follow(body: ReadableStream<Uint8Array>, onEvent: (event: EventDto) => Promise<void>): Promise<number> {
  let retry = 2000;
  const arrived: EventDto[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => arrived.push(JSON.parse(message.data) as EventDto),
    onRetry: (ms) => (retry = ms),
  });
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    for (const event of arrived.splice(0)) await onEvent(event);
  }
  return retry;
}

/** What it is doing, one short line on stdout (problems go to stderr). */
function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  const apiKey = process.env.TASKS_API_KEY;
  if (!apiKey) throw new Error('Set TASKS_API_KEY to a project key (tsk_...)');
  const file = process.env.MIRROR_FILE ?? 'mirror.json';
  const baseUrl = process.env.TASKS_API_URL ?? 'http://localhost:3000';
  const api = createClient({ baseUrl, apiKey });
  say(`Mirroring the project of this key at ${baseUrl} into ${file}; Ctrl+C stops`);
  const stopped = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stopped.abort());

  let store: Store | null = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Store) : null;
  // A file written before the mirror kept comments.
  if (store) store.comments ??= {};
  if (store) say(`${file} holds the project as of event ${store.lastEventId ?? 0}: resuming from there`);
  let saveTimer: NodeJS.Timeout | undefined;
  const saveSoon = () => (saveTimer ??= setTimeout(() => ((saveTimer = undefined), store && save(file, store)), 50));
  while (!stopped.signal.aborted) {
    let retry = 2000;
    try {
      // The lists first, as of a position in the feed; then the stream from that position.
      if (!store) {
        say('Loading the project from the lists: members, labels, sprints, the trash, then each task...');
        store = await load(api);
        save(file, store);
        const count = (records: object) => Object.keys(records).length;
        say(
          `Loaded ${count(store.tasks)} tasks, ${count(store.trash)} in the trash, ${count(store.sprints)} sprints, ` +
            `${count(store.members)} members and ${count(store.labels)} labels, as of event ${store.lastEventId}`,
        );
      }
      const { lastEventId } = store;
      const { data, error, response } = await api.GET('/api/v1/events/stream', {
        params: { header: lastEventId ? { 'Last-Event-ID': lastEventId } : {} },
        parseAs: 'stream',
        signal: stopped.signal,
      });
      if (error) {
        // 410: the feed no longer has our position; 400: it never had it (a new database). Start again from the lists.
        if (response.status === 410 || response.status === 400) store = null;
        else console.error(`GET /api/v1/events/stream answered ${response.status} ${error.code}: ${error.detail}`);
        if (response.status === 401 || response.status === 403) throw new Error('The key was refused');
      } else {
        const current = store;
        say(`Following the event stream after event ${lastEventId ?? 0}`);
        retry = await follow(data!, async (event) => {
          await apply(api, current, event);
          say(`event ${event.sequence}: ${event.type}`);
          saveSoon();
        });
      }
    } catch (error) {
      if (stopped.signal.aborted) break;
      if (error instanceof Error && error.message === 'The key was refused') throw error;
      console.error(`The stream broke (${error instanceof Error ? error.message : String(error)}): reconnecting`);
    }
    await sleep(retry, undefined, { signal: stopped.signal }).catch(() => undefined);
  }
  clearTimeout(saveTimer);
  if (store) save(file, store);
  say(`Stopped; ${file} holds the project as of event ${store?.lastEventId ?? 0}`);
}

/** The answer's body, or an error naming the problem. */
async function ok<T>(request: Promise<{ data?: T; error?: { code: string; detail: string }; response: Response }>): Promise<T> {
  const { data, error, response } = await request;
  if (error || data === undefined) throw new Error(`${response.url} answered ${response.status} ${error?.code}: ${error?.detail}`);
  return data;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
