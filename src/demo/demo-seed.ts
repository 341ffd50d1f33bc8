import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AdminService } from '../admin/admin.service';
import type { Caller } from '../auth/caller';
import { ALL_PERMISSIONS } from '../auth/permissions';
import { AttachmentsService } from '../attachments/attachments.service';
import { CommentsService } from '../comments/comments.service';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { addDays, madridToday } from '../common/dates';
import { DatabaseStart } from '../database/database.module';
import { SprintsService } from '../sprints/sprints.service';
import { DependenciesService } from '../tasks/dependencies.service';
import { TaskOrderService } from '../tasks/task-order.service';
import { TaskPriority, TaskStatus } from '../tasks/task-fields';
import { TasksService } from '../tasks/tasks.service';

/** The name of the demo project's key (npm run demo:key issues another of that name: src/demo/demo-key.cli.ts). */
export const DEMO_KEY_NAME = 'Demo key';

/**
 * On a new embedded database: a demo project worth exploring and a key holding every permission,
 * printed once. Written through the services, as the app and a client would, so that every change
 * has its events and history.
 */
@Injectable()
export class DemoSeed implements OnApplicationBootstrap {
  private readonly logger = new Logger('Demo');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly database: DatabaseStart,
    private readonly admin: AdminService,
    private readonly sprints: SprintsService,
    private readonly tasks: TasksService,
    private readonly dependencies: DependenciesService,
    private readonly order: TaskOrderService,
    private readonly comments: CommentsService,
    private readonly attachments: AttachmentsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.seedDemoProject || this.database.engine.kind !== 'pglite') return;
    if (!this.database.wasEmpty) return this.sayWhyNoKeyIsPrinted();
    // Through the admin service, as the app would set a project up: its members and labels are
    // changes of the project (label.created, member.created), so its feed starts with them and a
    // mirror reading from 0 knows every member and label a task shows (decisions.md section 20).
    const { project } = await this.admin.createProject({ name: 'Demo project' });
    const member = async (name: string) => (await this.admin.createMember(project.id, { name })).member.membershipId;
    const ids = { ada: await member('Ada Lovelace'), grace: await member('Grace Hopper'), label: {} as Record<string, string> };
    for (const [name, color] of [
      ['bug', '#d73a4a'],
      ['feature', '#0e8a16'],
      ['docs', '#0075ca'],
    ]) {
      ids.label[name] = (await this.admin.createLabel(project.id, { name, color })).label.id;
    }
    const { key, secret } = await this.admin.issueKey(project.id, { name: DEMO_KEY_NAME, permissions: [...ALL_PERMISSIONS] });
    const caller: Caller = {
      projectId: project.id,
      keyId: key.id,
      keyName: key.name,
      permissions: new Set(ALL_PERMISSIONS),
      actor: `${key.name} (API)`,
    };
    await this.createWork(caller, ids);
    this.logger.log('Demo project created; its key is printed once, on stdout');
    // Printed, not logged: it is shown this once and stored only as a hash. Plain lines
    // between the JSON log lines, so that a person starting the service reads it.
    process.stdout.write(
      [
        '',
        'A demo project was created on this new embedded database. Its API key (shown once):',
        '',
        `    ${secret}`,
        '',
        `Try it: curl -H "Authorization: Bearer ${secret}" http://localhost:${this.config.port}/api/v1/tasks`,
        `or in the Swagger UI at http://localhost:${this.config.port}/docs (Authorize, then paste the key).`,
        '',
      ].join('\n') + '\n',
    );
  }

  /**
   * A restart on an existing embedded database prints no key: the demo key was shown once, at
   * its first start, and only its hash is kept. Said at each start, with the ways to a new one, so
   * that the silence is not taken for a failure.
   */
  private async sayWhyNoKeyIsPrinted(): Promise<void> {
    const demo = await this.database.engine.withSession((session) =>
      session.query(`SELECT 1 FROM api_keys WHERE name = $1 LIMIT 1`, [DEMO_KEY_NAME]),
    );
    if (demo.length === 0) return;
    this.logger.log(
      `The embedded database in ${this.config.dataDir} was set up at an earlier start: its demo key was printed then, once, and is not printed again. ` +
        'Lost it? Stop the server and run `npm run demo:key` (a new key for the demo project), or, with ADMIN_TOKEN set, ' +
        'issue one while it runs: POST /admin/v1/projects/{projectId}/keys (GET /admin/v1/projects lists the projects).',
    );
  }

  private async createWork(caller: Caller, ids: { ada: string; grace: string; label: Record<string, string> }): Promise<void> {
    const today = madridToday();
    const task = async (title: string, fields: DemoTask = {}) =>
      (
        await this.tasks.create(caller, {
          title,
          description: fields.description,
          status: fields.status,
          priority: fields.priority,
          assigneeId: fields.assigneeId,
          labelIds: fields.labels?.map((name) => ids.label[name]),
          sprintId: fields.sprintId,
          dueDate: fields.dueInDays === undefined ? undefined : addDays(today, fields.dueInDays),
          parentId: fields.parentId,
          estimate: fields.estimate,
        })
      ).task;
    const done = (taskId: string) => this.tasks.update(caller, taskId, { status: TaskStatus.done });

    // Sprint 0 ran and was closed (the app side activates and closes sprints, never the API):
    // its report shows a commitment, an addition, a re-estimate, what was delivered and what
    // was carried over to Sprint 1.
    const { sprint: previous } = await this.sprints.create(caller, {
      name: 'Sprint 0',
      goal: 'A walking skeleton',
      startDate: addDays(today, -21),
      endDate: addDays(today, -8),
    });
    const { sprint: current } = await this.sprints.create(caller, {
      name: 'Sprint 1',
      goal: 'Ship the first public beta',
      startDate: addDays(today, -7),
      endDate: addDays(today, 7),
    });
    const staging = await task('Set up the staging environment', { assigneeId: ids.ada, sprintId: previous.id, estimate: 3 });
    const schema = await task('Database schema for tasks and sprints', { assigneeId: ids.grace, sprintId: previous.id, estimate: 5 });
    const login = await task('Sign-in with an email link', {
      priority: TaskPriority.high,
      assigneeId: ids.ada,
      labels: ['feature'],
      sprintId: previous.id,
      dueInDays: 3,
      estimate: 8,
      description: 'Send a one-time link instead of asking for a password.\n\n- link valid for 15 minutes\n- one use only',
    });
    await this.sprints.activate(previous.id);
    const ci = await task('Continuous integration', { assigneeId: ids.grace, sprintId: previous.id, estimate: 2 });
    await this.tasks.update(caller, schema.id, { estimate: 8 });
    for (const finished of [staging, schema, ci]) await done(finished.id);
    await this.tasks.update(caller, login.id, { status: TaskStatus.in_progress });
    await this.sprints.close(previous.id, current.id);

    await task('Email template for the sign-in link', {
      status: TaskStatus.todo,
      assigneeId: ids.grace,
      sprintId: current.id,
      parentId: login.id,
      estimate: 1,
    });
    const crash = await task('Crash when a due date is cleared', {
      status: TaskStatus.in_review,
      priority: TaskPriority.urgent,
      assigneeId: ids.grace,
      labels: ['bug'],
      sprintId: current.id,
      dueInDays: 1,
      estimate: 2,
    });
    const release = await task('Release notes for the beta', {
      status: TaskStatus.todo,
      priority: TaskPriority.medium,
      labels: ['docs'],
      sprintId: current.id,
      dueInDays: 6,
      estimate: 1,
    });
    await this.dependencies.add(caller, release.id, crash.id);
    await this.sprints.activate(current.id);
    const { sprint: next } = await this.sprints.create(caller, {
      name: 'Sprint 2',
      goal: 'Polish and documentation',
      startDate: addDays(today, 8),
      endDate: addDays(today, 21),
    });
    await task('Keyboard shortcuts for the board', { priority: TaskPriority.low, labels: ['feature'], sprintId: next.id, estimate: 3 });
    await task('API reference examples in three languages', { assigneeId: ids.grace, labels: ['docs', 'feature'], sprintId: next.id, estimate: 5 });
    await task('Dark mode', { labels: ['feature'] });
    const search = await task('Slow search with more than 10 000 tasks', { status: TaskStatus.todo, priority: TaskPriority.high, labels: ['bug'] });
    await task('Old import format', { status: TaskStatus.cancelled, description: 'Nobody uses it any more.' });
    // The backlog order: the urgent crash first, then the slow search, the rest as created.
    await this.order.moveMany(caller, { taskIds: [crash.id, search.id], to: 'top' });

    // A conversation on the crash: a comment that mentions a member, a reply, an edit (a revision).
    const { comment: found } = await this.comments.create(caller, crash.id, {
      body: `Reproduced: clearing the due date of a task in a sprint sends \`null\` to the board, which then fails. <@${ids.grace}>, can you take it?`,
    });
    await this.comments.create(caller, crash.id, { body: 'On it: the fix is in review.', parentId: found.id });
    await this.comments.update(caller, crash.id, found.id, {
      body: `Reproduced: clearing the due date of a task in a sprint sends \`null\` to the board, which then fails to render. <@${ids.grace}>, can you take it?`,
    });
    await this.comments.create(caller, search.id, {
      body: `<@${ids.ada}> measured 2.4 s for a search over 12 000 tasks.`,
    });
    // The log of the crash, attached to it (docs/attachments.md).
    await this.attachments.attachBytes(
      caller,
      crash.id,
      'board-crash.log',
      Buffer.from(
        '2026-11-21T09:14:03.120Z ERROR board: TypeError: Cannot read properties of null (reading "toISOString")\n' +
          '    at dueLabel (board/card.ts:42:19)\n    at renderCard (board/card.ts:17:5)\n',
      ),
    );
  }
}

interface DemoTask {
  status?: TaskStatus;
  priority?: TaskPriority;
  assigneeId?: string;
  labels?: string[];
  sprintId?: string;
  dueInDays?: number;
  parentId?: string;
  description?: string;
  estimate?: number;
}
