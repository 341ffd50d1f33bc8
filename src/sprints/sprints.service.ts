import { HttpStatus, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller';
import { ChangeLog } from '../changes/change-log.service';
import { APP_ACTOR, CHANGE_TIME, changesBetween, TaskChange } from '../changes/change';
import { sentFields, withDefaults } from '../common/fields/fields';
import { violates } from '../common/errors/database-errors';
import { badRequest, conflict, notFound, Problem } from '../common/errors/problem';
import { assertIfMatch } from '../common/http/entity-tag';
import { isUuid } from '../common/ids';
import { PrismaService } from '../database/prisma.service';
import type { SqlTransaction } from '../database/sql';
import { lockSprints, lockTasks } from '../changes/locks';
import { Prisma } from '../generated/prisma/client';
import { FINISHED_STATUSES } from '../tasks/task-fields';
import { referenceNotFound } from '../tasks/task-references';
import type { CreateSprintDto, SprintDto, SprintListDto, SprintResponseDto, UpdateSprintDto } from './sprint.dto';
import { SPRINT_FIELDS, SPRINT_SQL, SPRINT_WRITABLE, SprintFields } from './sprint-fields';
import { SPRINT_JSON } from './sprint-view.sql';

@Injectable()
export class SprintsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly changes: ChangeLog,
  ) {}

  async list(caller: Caller): Promise<SprintListDto> {
    const [row] = await this.prisma.sql.$queryRaw<{ sprints: SprintDto[] }[]>`
      SELECT COALESCE(json_agg(${SPRINT_JSON} ORDER BY s.created_at DESC, s.id DESC), '[]'::json) AS sprints
        FROM sprints s WHERE s.project_id = ${caller.projectId}::uuid`;
    return { sprints: row.sprints };
  }

  async get(caller: Caller, sprintId: string): Promise<SprintResponseDto> {
    const rows = await this.prisma.sql.$queryRaw<{ sprint: SprintDto }[]>`
      SELECT ${SPRINT_JSON} AS sprint FROM sprints s WHERE s.id = ${sprintId}::uuid AND s.project_id = ${caller.projectId}::uuid`;
    if (rows.length === 0) throw notFound('Sprint');
    return { sprint: rows[0].sprint };
  }

  /** Every sprint starts planned, also when created through the API. */
  async create(caller: Caller, dto: CreateSprintDto): Promise<SprintResponseDto> {
    assertWindow(dto.startDate ?? null, dto.endDate ?? null);
    const { projectId } = caller;
    const sprintId = randomUUID();
    const written = SPRINT_SQL.writing(SPRINT_WRITABLE.all);
    const sprint = await this.prisma.write(async (tx) => {
      const recorded = await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: [{ sprint: sprintId, action: 'created' }] },
        Prisma.sql`
          INSERT INTO sprints (id, project_id, ${written.columns}, created_at, updated_at)
          VALUES (${sprintId}::uuid, ${projectId}::uuid, ${written.values(withDefaults(SPRINT_FIELDS, dto))}, ${CHANGE_TIME}, ${CHANGE_TIME})`,
      );
      return recorded.sprints[sprintId];
    });
    return { sprint };
  }

  /** Values equal to the current ones change nothing: no write, no event. */
  async update(caller: Caller, sprintId: string, dto: UpdateSprintDto, ifMatch?: string): Promise<SprintResponseDto> {
    // A window the body alone makes wrong is a 400 before any 404; the resulting one is checked after the lock.
    if (dto.startDate !== undefined && dto.endDate !== undefined) assertWindow(dto.startDate, dto.endDate);
    const { projectId } = caller;
    const sprint = await this.prisma.write(async (tx) => {
      const current = await lockSprint(tx, projectId, sprintId);
      await assertIfMatch(ifMatch, () => ({ sprint: current.view }));
      const requested: Partial<SprintFields> = sentFields(SPRINT_FIELDS, dto);
      const next: SprintFields = { ...fieldsOf(current.view), ...requested };
      assertWindow(next.startDate, next.endDate);
      const changes = changesBetween(fieldsOf(current.view), requested);
      if (changes.length === 0) return current.view;
      const written = SPRINT_SQL.writing(SPRINT_WRITABLE.patchable);
      const recorded = await this.changes.record(
        tx,
        { projectId, actor: caller.actor, records: [{ sprint: sprintId, action: 'updated', changes }] },
        Prisma.sql`UPDATE sprints SET (${written.columns}, updated_at) = (${written.values(next)}, ${CHANGE_TIME}) WHERE id = ${sprintId}::uuid`,
      );
      return recorded.sprints[sprintId];
    });
    return { sprint };
  }

  /** Deletes a sprint in any status; its tasks, live or in the trash, survive without a sprint, each change in their history. */
  async delete(caller: Caller, sprintId: string, ifMatch?: string): Promise<void> {
    const { projectId, actor } = caller;
    await this.prisma.write(async (tx) => {
      // The sprint, then its tasks (src/changes/locks.ts).
      const [[current], tasks] = await tx.pipeline<[LockedSprint[], { id: string }[]]>(
        lockSprintView(projectId, sprintId),
        lockTasks(projectId, Prisma.sql`t.sprint_id = ${sprintId}::uuid`, 'FOR NO KEY UPDATE'),
      );
      if (!current) throw notFound('Sprint');
      await assertIfMatch(ifMatch, () => ({ sprint: current.view }));
      const moved = tasks.map((task) => task.id);
      await this.changes.record(
        tx,
        { projectId, actor, records: [...movedOut(moved, sprintId, null), { sprint: sprintId, action: 'deleted' }] },
        moveTasks(moved, sprintId, null),
        Prisma.sql`DELETE FROM sprints WHERE id = ${sprintId}::uuid`,
        // Its ledger goes with it (no foreign key cascades to it: schema.prisma says why).
        Prisma.sql`DELETE FROM sprint_ledger WHERE sprint_id = ${sprintId}::uuid`,
        Prisma.sql`DELETE FROM sprint_scope WHERE sprint_id = ${sprintId}::uuid`,
      );
    });
  }

  /** The app side: a planned sprint becomes the project's one active sprint. */
  async activate(sprintId: string): Promise<SprintResponseDto> {
    try {
      const sprint = await this.prisma.write(async (tx) => {
        const current = await lockSprint(tx, null, sprintId);
        if (current.view.status !== 'planned')
          throw conflict('conflict', `Only a planned sprint can be activated; this one is ${current.view.status}`);
        const [active] = await tx.$queryRaw<ActiveSprint[]>(activeSprintOf(Prisma.sql`${current.projectId}::uuid`));
        if (active) throw alreadyActive(active);
        return this.setStatus(tx, current.projectId, sprintId, 'active', []);
      });
      return { sprint };
    } catch (error) {
      // Two activations at once: the partial unique index lets only one commit; the other names it.
      if (violates(error, 'sprints_one_active_per_project')) {
        const [active] = await this.prisma.sql.$queryRaw<ActiveSprint[]>(
          activeSprintOf(Prisma.sql`(SELECT project_id FROM sprints WHERE id = ${sprintId}::uuid)`),
        );
        throw alreadyActive(active);
      }
      throw error;
    }
  }

  /**
   * The app side: closes the active sprint. Its done and cancelled tasks stay; its other
   * live tasks move to `moveOpenTasksTo` (a planned sprint of the project) or to no sprint,
   * each move recorded in history (and as a task.updated event) by the App.
   */
  async close(sprintId: string, moveOpenTasksTo: string | null): Promise<SprintResponseDto> {
    const sprint = await this.prisma.write(async (tx) => {
      // Both sprints by id, then every live task of the one closing, whatever its status
      // (src/changes/locks.ts). Each is answered as it is once locked: a status change that
      // committed before the lock is seen, and none can commit after it until this close has
      // (a task write that then reopens a task finds the sprint closed: TasksService.update).
      const ids = moveOpenTasksTo === null ? [sprintId] : [sprintId, moveOpenTasksTo].filter(isUuid);
      const [sprints, tasks] = await tx.pipeline<[{ id: string; projectId: string; status: string }[], { id: string; open: boolean }[]]>(
        lockSprints(Prisma.sql`s.id = ANY(${ids}::uuid[])`, 'FOR UPDATE'),
        lockTasks(
          Prisma.sql`(SELECT project_id FROM sprints WHERE id = ${sprintId}::uuid)`,
          Prisma.sql`t.sprint_id = ${sprintId}::uuid AND t.deleted_at IS NULL`,
          'FOR NO KEY UPDATE',
          Prisma.sql`t.id::text, t.status NOT IN (${Prisma.join(FINISHED_STATUSES.map((status) => Prisma.sql`${status}::task_status`))}) AS open`,
        ),
      );
      // Both sprints must exist (404) before their states are checked (409): decisions.md section 1.
      const current = sprints.find((found) => found.id === sprintId);
      if (!current) throw notFound('Sprint');
      const target = moveOpenTasksTo === null ? null : sprints.find((found) => found.id === moveOpenTasksTo && found.projectId === current.projectId);
      if (target === undefined) throw referenceNotFound('moveOpenTasksTo', 'moveOpenTasksTo', [moveOpenTasksTo!]);
      if (current.status !== 'active') throw conflict('conflict', `Only the active sprint can be closed; this one is ${current.status}`);
      if (target && target.status !== 'planned')
        throw conflict('conflict', `Open tasks can only move to a planned sprint; that one is ${target.status}`);
      const moved = tasks.filter((task) => task.open).map((task) => task.id);
      return this.setStatus(tx, current.projectId, sprintId, 'closed', moved, moveOpenTasksTo);
    });
    return { sprint };
  }

  /** Records the sprint's new status, with the open tasks a close moves to `movedTo`. */
  private async setStatus(
    tx: SqlTransaction,
    projectId: string,
    sprintId: string,
    status: 'active' | 'closed',
    moved: string[],
    movedTo: string | null = null,
  ): Promise<SprintDto> {
    const action = status === 'active' ? 'activated' : 'closed';
    const recorded = await this.changes.record(
      tx,
      { projectId, actor: APP_ACTOR, records: [...movedOut(moved, sprintId, movedTo), { sprint: sprintId, action }] },
      moveTasks(moved, sprintId, movedTo),
      Prisma.sql`
        UPDATE sprints SET status = ${status}::sprint_status, updated_at = ${CHANGE_TIME},
               ${Prisma.raw(status === 'active' ? 'activated_at' : 'closed_at')} = ${CHANGE_TIME}
               ${Prisma.raw(status === 'closed' ? CLOSED_WINDOW : '')}
         WHERE id = ${sprintId}::uuid`,
    );
    return recorded.sprints[sprintId];
  }
}

interface ActiveSprint {
  id: string;
  name: string;
}

/** The project's active sprint (none or one: the partial unique index), `project` an SQL expression of its id. */
function activeSprintOf(project: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`SELECT id::text, name FROM sprints WHERE project_id = ${project} AND status = 'active'`;
}

/** 409 naming the sprint that is active already (`activeSprintId`), and what to do about it. */
function alreadyActive(active: ActiveSprint | undefined): Problem {
  if (!active) return conflict('conflict', 'The project already has an active sprint');
  return new Problem(
    HttpStatus.CONFLICT,
    'conflict',
    `The project already has an active sprint: "${active.name}" (${active.id}); close it first (POST /admin/v1/sprints/${active.id}/close)`,
    undefined,
    { activeSprintId: active.id },
  );
}

/**
 * A close keeps the window the sprint has then: its frozen burndown draws its ideal line on it,
 * whatever the window becomes later (a closed sprint's window can still be edited).
 */
const CLOSED_WINDOW = ', closed_start_date = start_date, closed_end_date = end_date';

/** Moves the tasks `ids` (locked) out of sprint `from`, to `to` or to no sprint. */
function moveTasks(ids: string[], from: string, to: string | null): Prisma.Sql {
  return Prisma.sql`
    UPDATE tasks SET sprint_id = ${to}::uuid, updated_at = ${CHANGE_TIME} WHERE id = ANY(${ids}::uuid[]) AND sprint_id = ${from}::uuid`;
}

/** Each moved task's change, as its history records it. */
function movedOut(ids: string[], from: string, to: string | null): TaskChange[] {
  return ids.map((id) => ({ task: id, action: 'updated', changes: [{ field: 'sprintId', from, to }] }));
}

interface LockedSprint {
  projectId: string;
  view: SprintDto;
}

/** Locks a sprint (FOR UPDATE) and reads it as the API shows it; `projectId` null (the app side) finds it in any project. */
function lockSprintView(projectId: string | null, sprintId: string): Prisma.Sql {
  return lockSprints(
    Prisma.sql`s.id = ${sprintId}::uuid AND (${projectId}::uuid IS NULL OR s.project_id = ${projectId}::uuid)`,
    'FOR UPDATE',
    Prisma.sql`s.project_id::text AS "projectId", ${SPRINT_JSON} AS view`,
  );
}

async function lockSprint(tx: SqlTransaction, projectId: string | null, sprintId: string): Promise<LockedSprint> {
  const rows = await tx.$queryRaw<LockedSprint[]>(lockSprintView(projectId, sprintId));
  if (rows.length === 0) throw notFound('Sprint');
  return rows[0];
}

/** A sprint's editable fields, from its view. */
function fieldsOf(sprint: SprintDto): SprintFields {
  return Object.fromEntries(SPRINT_WRITABLE.patchable.map((name) => [name, sprint[name]])) as SprintFields;
}

/** The resulting window must satisfy startDate <= endDate. */
function assertWindow(startDate: string | null, endDate: string | null): void {
  if (startDate !== null && endDate !== null && endDate < startDate) {
    throw badRequest('invalid_date_window', `endDate (${endDate}) is before startDate (${startDate})`, 'endDate');
  }
}
