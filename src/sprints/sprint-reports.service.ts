import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { conflict, notFound } from '../common/errors/problem';
import type { JsonText } from '../common/http/json-text';
import { PrismaService } from '../database/prisma.service';
import { Prisma } from '../generated/prisma/client';
import { statement, type Column, type Statement } from '../database/sql';
import type { BurndownDto, SprintReportDto, SprintReportResponseDto, VelocityDto, VelocityQueryDto } from './sprint-report.dto';
import { burndownSql, reportSql, velocitySql } from './sprint-ledger.sql';

/** Sprint reports, burndowns and velocity (decisions.md section 19), read from the sprint ledger. */
@Injectable()
export class SprintReportsService {
  constructor(private readonly prisma: PrismaService) {}

  /** A closed sprint's report is the one frozen at its close, byte for byte; others are computed now. */
  async report(caller: Caller, sprintId: string): Promise<JsonText<SprintReportResponseDto>> {
    const sprint = await this.sprint(caller, sprintId);
    if (sprint.report !== null) return `{"report":${sprint.report}}`;
    const [row] = await this.prisma.sql.rows(textOf(reportSql(caller.projectId, sprintId), 'report'));
    return `{"report":${row.report}}`;
  }

  /** A planned sprint has no burndown: 409. */
  async burndown(caller: Caller, sprintId: string): Promise<JsonText<BurndownDto>> {
    const sprint = await this.sprint(caller, sprintId);
    if (sprint.status === 'planned') throw conflict('conflict', 'A planned sprint has no burndown: it starts when the sprint is activated');
    const [row] = await this.prisma.sql.rows(textOf(burndownSql(caller.projectId, sprintId), 'burndown'));
    return row.burndown;
  }

  async velocity(caller: Caller, query: VelocityQueryDto): Promise<JsonText<VelocityDto>> {
    const [row] = await this.prisma.sql.rows(textOf(velocitySql(caller.projectId, query.last ?? 6), 'velocity'));
    return row.velocity;
  }

  private async sprint(caller: Caller, sprintId: string): Promise<SprintState> {
    const [sprint] = await this.prisma.sql.rows(
      statement<SprintState>(Prisma.sql`
        SELECT status::text, report::text FROM sprints WHERE id = ${sprintId}::uuid AND project_id = ${caller.projectId}::uuid`),
    );
    if (!sprint) throw notFound('Sprint');
    return sprint;
  }
}

/** A sprint's status, and its report when it was frozen at its close, as text. */
interface SprintState {
  status: Column<'sprints', 'status'>;
  report: JsonText<SprintReportDto> | null;
}

/** The statement's one JSON column as text, as PostgreSQL writes it: sent to the client as it is. */
function textOf<Row, K extends keyof Row & string>(json: Statement<Row>, column: K): Statement<{ [P in K]: JsonText<Row[K]> }> {
  return statement(Prisma.sql`SELECT ${Prisma.raw(column)}::text AS ${Prisma.raw(column)} FROM (${json}) answer`);
}
