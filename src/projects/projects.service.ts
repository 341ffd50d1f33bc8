import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { PrismaService } from '../database/prisma.service';
import type { LabelListDto, MemberListDto } from './project-resources.dto';
import { LABEL_JSON, MEMBER_JSON } from './project-resources.sql';

/** The project's members and labels, as the key's project sees them, in the shapes their events and tasks show. */
@Injectable()
export class ProjectsService {
  constructor(private readonly prisma: PrismaService) {}

  async listMembers(caller: Caller): Promise<MemberListDto> {
    const [row] = await this.prisma.sql.$queryRaw<MemberListDto[]>`
      SELECT COALESCE(json_agg(${MEMBER_JSON} ORDER BY m.name, m.id), '[]'::json) AS members
        FROM memberships m WHERE m.project_id = ${caller.projectId}::uuid`;
    return row;
  }

  async listLabels(caller: Caller): Promise<LabelListDto> {
    const [row] = await this.prisma.sql.$queryRaw<LabelListDto[]>`
      SELECT COALESCE(json_agg(${LABEL_JSON} ORDER BY l.name, l.id), '[]'::json) AS labels
        FROM labels l WHERE l.project_id = ${caller.projectId}::uuid`;
    return row;
  }
}
