import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { ChangeLog } from '../changes/change-log.service';
import { APP_ACTOR, changesBetween, definedOnly, TaskChange } from '../changes/change';
import { databaseViolation } from '../common/errors/database-errors';
import { badRequest, conflict, notFound } from '../common/errors/problem';
import { assertIfMatch } from '../common/http/entity-tag';
import { isUuid } from '../common/ids';
import { PrismaService } from '../database/prisma.service';
import type { SqlTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import { FINISHED_STATUSES } from '../tasks/task-fields';
import type { CreateSprintDto, SprintDto, SprintListDto, SprintResponseDto, UpdateSprintDto } from './sprint.dto';
import { SPRINT_JSON } from './sprint-view.sql';

/** A sprint's editable fields, as the API names and writes them. */
type SprintFields = Pick<SprintDto, 'name' | 'goal' | 'startDate' | 'endDate'>;

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
    const rows = isUuid(sprintId)
      ? await this.prisma.sql.$queryRaw<{ sprint: SprintDto }[]>`
          SELECT ${SPRINT_JSON} AS sprint FROM sprints s WHERE s.id = ${sprintId}::uuid AND s.project_id = ${caller.projectId}::uuid`
      : [];
    if (rows.length === 0) throw notFound('Sprint');
    return { sprint: rows[0].sprint };
  }

  /** Every sprint starts planned, also when created through the API. */
  async create(caller: Caller, dto: CreateSprintDto): Promise<SprintResponseDto> {
    assertWindow(dto.startDate ?? null, dto.endDate ?? null);
    const { projectId } = caller;
    const sprint = await this.prisma.write(async (tx) => {
      const now = new Date();
      const [row] = await tx.$queryRaw<{ sprint: SprintDto }[]>`
        INSERT INTO sprints AS s (project_id, name, goal, start_date, end_date, created_at, updated_at)
        VALUES (${projectId}::uuid, ${dto.name}, ${dto.goal ?? null}, ${dto.startDate ?? null}::date, ${dto.endDate ?? null}::date,
                ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)
        RETURNING ${SPRINT_JSON} AS sprint`;
      await this.changes.record(tx, { projectId, actor: caller.actor, at: now, records: [{ sprint: row.sprint.id, action: 'created' }] });
      return row.sprint;
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
      const requested: Partial<SprintFields> = definedOnly<SprintFields>({
        name: dto.name,
        goal: dto.goal,
        startDate: dto.startDate,
        endDate: dto.endDate,
      });
      const next: SprintFields = { ...fieldsOf(current.view), ...requested };
      assertWindow(next.startDate, next.endDate);
      const changes = changesBetween(fieldsOf(current.view), requested);
      if (changes.length === 0) return current.view;
      const now = new Date();
      const [row] = await tx.$queryRaw<{ sprint: SprintDto }[]>`
        UPDATE sprints s SET name = ${next.name}, goal = ${next.goal}, start_date = ${next.startDate}::date, end_date = ${next.endDate}::date,
               updated_at = ${now.toISOString()}::timestamptz
         WHERE s.id = ${sprintId}::uuid
        RETURNING ${SPRINT_JSON} AS sprint`;
      await this.changes.record(tx, { projectId, actor: caller.actor, at: now, records: [{ sprint: sprintId, action: 'updated', changes }] });
      return row.sprint;
    });
    return { sprint };
  }

  /** Deletes a sprint in any status; its tasks survive without a sprint, each change in their history. */
  async delete(caller: Caller, sprintId: string, ifMatch?: string): Promise<void> {
    const { projectId, actor } = caller;
    await this.prisma.write(async (tx) => {
      const current = await lockSprint(tx, projectId, sprintId);
      await assertIfMatch(ifMatch, () => ({ sprint: current.view }));
      const moved = await moveTasks(tx, { projectId, from: sprintId, to: null, onlyOpen: false });
      await tx.$executeRaw`DELETE FROM sprints WHERE id = ${sprintId}::uuid`;
      await this.changes.record(tx, { projectId, actor, at: new Date(), records: [...moved, { sprint: sprintId, action: 'deleted' }] });
    });
  }

  /** The app side: a planned sprint becomes the project's one active sprint. */
  async activate(sprintId: string): Promise<SprintResponseDto> {
    try {
      const sprint = await this.prisma.write(async (tx) => {
        const current = await lockSprint(tx, null, sprintId);
        if (current.view.status !== 'planned')
          throw conflict('conflict', `Only a planned sprint can be activated; this one is ${current.view.status}`);
        const [{ active }] = await tx.$queryRaw<{ active: number }[]>`
          SELECT count(*)::int AS active FROM sprints WHERE project_id = ${current.projectId}::uuid AND status = 'active'`;
        if (active > 0) throw conflict('conflict', 'The project already has an active sprint');
        return this.setStatus(tx, current.projectId, sprintId, 'active', []);
      });
      return { sprint };
    } catch (error) {
      // Two activations at once: the partial unique index lets only one commit.
      if (databaseViolation(error) === 'unique') throw conflict('conflict', 'The project already has an active sprint');
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
      // Both sprints must exist (404) before their states are checked (409): decisions.md section 1.
      const current = await lockSprint(tx, null, sprintId);
      const target = moveOpenTasksTo === null ? null : await lockSprint(tx, current.projectId, moveOpenTasksTo, 'Sprint to move the open tasks to');
      if (current.view.status !== 'active') throw conflict('conflict', `Only the active sprint can be closed; this one is ${current.view.status}`);
      if (target && target.view.status !== 'planned') {
        throw conflict('conflict', `Open tasks can only move to a planned sprint; that one is ${target.view.status}`);
      }
      const moved = await moveTasks(tx, { projectId: current.projectId, from: sprintId, to: moveOpenTasksTo, onlyOpen: true });
      return this.setStatus(tx, current.projectId, sprintId, 'closed', moved);
    });
    return { sprint };
  }

  private async setStatus(
    tx: SqlTransaction,
    projectId: string,
    sprintId: string,
    status: 'active' | 'closed',
    moved: TaskChange[],
  ): Promise<SprintDto> {
    const now = new Date();
    const [row] = await tx.$queryRaw<{ sprint: SprintDto }[]>`
      UPDATE sprints s SET status = ${status}::sprint_status, updated_at = ${now.toISOString()}::timestamptz
       WHERE s.id = ${sprintId}::uuid
      RETURNING ${SPRINT_JSON} AS sprint`;
    const action = status === 'active' ? 'activated' : 'closed';
    await this.changes.record(tx, { projectId, actor: APP_ACTOR, at: now, records: [...moved, { sprint: sprintId, action }] });
    return row.sprint;
  }
}

/**
 * Takes a sprint's tasks out of it (to `to`, or to no sprint) and answers the change of each
 * task, for the caller to record with the rest of its change.
 */
async function moveTasks(tx: SqlTransaction, move: { projectId: string; from: string; to: string | null; onlyOpen: boolean }): Promise<TaskChange[]> {
  const onlyOpen = move.onlyOpen
    ? Prisma.sql`AND deleted_at IS NULL AND status NOT IN (${Prisma.join(FINISHED_STATUSES.map((status) => Prisma.sql`${status}::task_status`))})`
    : Prisma.empty;
  const moved = await tx.$queryRaw<{ id: string }[]>`
    UPDATE tasks SET sprint_id = ${move.to}::uuid, updated_at = ${new Date().toISOString()}::timestamptz
     WHERE project_id = ${move.projectId}::uuid AND sprint_id = ${move.from}::uuid ${onlyOpen}
    RETURNING id::text`;
  return moved.map((task) => ({ task: task.id, action: 'updated', changes: [{ field: 'sprintId', from: move.from, to: move.to }] }));
}

interface LockedSprint {
  projectId: string;
  view: SprintDto;
}

/** Locks a sprint for the transaction and reads it as the API shows it; `projectId` null (the app side) finds it in any project. */
async function lockSprint(tx: SqlTransaction, projectId: string | null, sprintId: string, what = 'Sprint'): Promise<LockedSprint> {
  const rows = isUuid(sprintId)
    ? await tx.$queryRaw<{ projectId: string; view: SprintDto }[]>`
        SELECT s.project_id::text AS "projectId", ${SPRINT_JSON} AS view FROM sprints s
         WHERE s.id = ${sprintId}::uuid AND (${projectId}::uuid IS NULL OR s.project_id = ${projectId}::uuid) FOR UPDATE`
    : [];
  if (rows.length === 0) throw notFound(what);
  return rows[0];
}

function fieldsOf(sprint: SprintDto): SprintFields {
  return { name: sprint.name, goal: sprint.goal, startDate: sprint.startDate, endDate: sprint.endDate };
}

/** The resulting window must satisfy startDate <= endDate. */
function assertWindow(startDate: string | null, endDate: string | null): void {
  if (startDate !== null && endDate !== null && endDate < startDate) {
    throw badRequest('invalid_date_window', `endDate (${endDate}) is before startDate (${startDate})`, 'endDate');
  }
}
