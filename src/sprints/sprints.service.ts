import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { calendarDateToDate, formatCalendarDate } from '../common/dates';
import { databaseViolation } from '../common/errors/database-errors';
import { badRequest, conflict, notFound } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import { PrismaService, PrismaTransaction } from '../database/prisma.service';
import type { Sprint } from '../generated/prisma/client';
import { APP_ACTOR, HistoryService } from '../history/history.service';
import { FINISHED_STATUSES } from '../tasks/task-fields';
import type { CreateSprintDto, SprintDto, SprintListDto, SprintResponseDto, UpdateSprintDto } from './sprint.dto';

@Injectable()
export class SprintsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly history: HistoryService,
  ) {}

  async list(caller: Caller): Promise<SprintListDto> {
    const sprints = await this.prisma.sprint.findMany({
      where: { projectId: caller.projectId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    return { sprints: sprints.map(toSprintDto) };
  }

  async get(caller: Caller, sprintId: string): Promise<SprintResponseDto> {
    const sprint = isUuid(sprintId) ? await this.prisma.sprint.findFirst({ where: { id: sprintId, projectId: caller.projectId } }) : null;
    if (!sprint) throw notFound('Sprint');
    return { sprint: toSprintDto(sprint) };
  }

  /** Every sprint starts planned, also when created through the API. */
  async create(caller: Caller, dto: CreateSprintDto): Promise<SprintResponseDto> {
    assertWindow(dto.startDate ?? null, dto.endDate ?? null);
    const sprint = await this.prisma.sprint.create({
      data: {
        projectId: caller.projectId,
        name: dto.name,
        goal: dto.goal ?? null,
        startDate: toDate(dto.startDate ?? null),
        endDate: toDate(dto.endDate ?? null),
      },
    });
    return { sprint: toSprintDto(sprint) };
  }

  async update(caller: Caller, sprintId: string, dto: UpdateSprintDto): Promise<SprintResponseDto> {
    if (dto.startDate !== undefined && dto.endDate !== undefined) assertWindow(dto.startDate, dto.endDate);
    const sprint = await this.prisma.$transaction(async (tx) => {
      const current = await lockSprint(tx, caller.projectId, sprintId);
      const startDate = dto.startDate !== undefined ? dto.startDate : formatOptionalDate(current.startDate);
      const endDate = dto.endDate !== undefined ? dto.endDate : formatOptionalDate(current.endDate);
      assertWindow(startDate, endDate);
      return tx.sprint.update({
        where: { id: sprintId },
        data: {
          name: dto.name,
          goal: dto.goal,
          startDate: dto.startDate === undefined ? undefined : toDate(dto.startDate),
          endDate: dto.endDate === undefined ? undefined : toDate(dto.endDate),
          updatedAt: new Date(),
        },
      });
    });
    return { sprint: toSprintDto(sprint) };
  }

  /** Deletes a sprint in any status; its tasks survive without a sprint, each change in their history. */
  async delete(caller: Caller, sprintId: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      await lockSprint(tx, caller.projectId, sprintId);
      await this.moveTasks(tx, { projectId: caller.projectId, actor: caller.actor, from: sprintId, to: null, onlyOpen: false });
      await tx.sprint.delete({ where: { id: sprintId } });
    });
  }

  /** The app side: a planned sprint becomes the project's one active sprint. */
  async activate(sprintId: string): Promise<SprintResponseDto> {
    try {
      const sprint = await this.prisma.$transaction(async (tx) => {
        const current = await lockSprint(tx, null, sprintId);
        if (current.status !== 'planned') throw conflict('conflict', `Only a planned sprint can be activated; this one is ${current.status}`);
        const active = await tx.sprint.count({ where: { projectId: current.projectId, status: 'active' } });
        if (active > 0) throw conflict('conflict', 'The project already has an active sprint');
        return tx.sprint.update({ where: { id: sprintId }, data: { status: 'active', updatedAt: new Date() } });
      });
      return { sprint: toSprintDto(sprint) };
    } catch (error) {
      // Two activations at once: the partial unique index lets only one commit.
      if (databaseViolation(error) === 'unique') throw conflict('conflict', 'The project already has an active sprint');
      throw error;
    }
  }

  /**
   * The app side: closes the active sprint. Its done and cancelled tasks stay; its other
   * live tasks move to `moveOpenTasksTo` (a planned sprint of the project) or to no sprint,
   * each move recorded in history by the App.
   */
  async close(sprintId: string, moveOpenTasksTo: string | null): Promise<SprintResponseDto> {
    const sprint = await this.prisma.$transaction(async (tx) => {
      // Both sprints must exist (404) before their states are checked (409): decisions.md section 1.
      const current = await lockSprint(tx, null, sprintId);
      const target = moveOpenTasksTo === null ? null : await lockSprint(tx, current.projectId, moveOpenTasksTo, 'Sprint to move the open tasks to');
      if (current.status !== 'active') throw conflict('conflict', `Only the active sprint can be closed; this one is ${current.status}`);
      if (target && target.status !== 'planned')
        throw conflict('conflict', `Open tasks can only move to a planned sprint; that one is ${target.status}`);
      await this.moveTasks(tx, { projectId: current.projectId, actor: APP_ACTOR, from: sprintId, to: moveOpenTasksTo, onlyOpen: true });
      return tx.sprint.update({ where: { id: sprintId }, data: { status: 'closed', updatedAt: new Date() } });
    });
    return { sprint: toSprintDto(sprint) };
  }

  private async moveTasks(
    tx: PrismaTransaction,
    move: { projectId: string; actor: string; from: string; to: string | null; onlyOpen: boolean },
  ): Promise<void> {
    const where = {
      projectId: move.projectId,
      sprintId: move.from,
      ...(move.onlyOpen && { deletedAt: null, status: { notIn: [...FINISHED_STATUSES] } }),
    };
    const tasks = await tx.task.findMany({ where, select: { id: true } });
    if (tasks.length === 0) return;
    const now = new Date();
    await tx.task.updateMany({ where: { id: { in: tasks.map((task) => task.id) } }, data: { sprintId: move.to, updatedAt: now } });
    await this.history.record(tx, {
      projectId: move.projectId,
      actor: move.actor,
      at: now,
      records: tasks.map((task) => ({ taskId: task.id, action: 'updated', changes: [{ field: 'sprintId', from: move.from, to: move.to }] })),
    });
  }
}

/** Locks a sprint for the transaction; `projectId` null (the app side) finds it in any project. */
async function lockSprint(tx: PrismaTransaction, projectId: string | null, sprintId: string, what = 'Sprint'): Promise<Sprint> {
  const found = isUuid(sprintId)
    ? await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM sprints WHERE id = ${sprintId}::uuid AND (${projectId}::uuid IS NULL OR project_id = ${projectId}::uuid) FOR UPDATE`
    : [];
  if (found.length === 0) throw notFound(what);
  return tx.sprint.findUniqueOrThrow({ where: { id: sprintId } });
}

/** The resulting window must satisfy startDate <= endDate. */
function assertWindow(startDate: string | null, endDate: string | null): void {
  if (startDate !== null && endDate !== null && endDate < startDate) {
    throw badRequest('invalid_date_window', `endDate (${endDate}) is before startDate (${startDate})`, 'endDate');
  }
}

function toDate(value: string | null): Date | null {
  return value === null ? null : calendarDateToDate(value);
}

function formatOptionalDate(value: Date | null): string | null {
  return value === null ? null : formatCalendarDate(value);
}

export function toSprintDto(sprint: Sprint): SprintDto {
  return {
    id: sprint.id,
    name: sprint.name,
    goal: sprint.goal,
    status: sprint.status,
    startDate: formatOptionalDate(sprint.startDate),
    endDate: formatOptionalDate(sprint.endDate),
    createdAt: sprint.createdAt.toISOString(),
  };
}
