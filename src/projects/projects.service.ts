import { Injectable } from '@nestjs/common';
import type { Caller } from '../auth/caller';
import { PrismaService } from '../database/prisma.service';
import type { LabelListDto, MemberListDto } from './project-resources.dto';

/** The project's members and labels, as the key's project sees them. */
@Injectable()
export class ProjectsService {
  constructor(private readonly prisma: PrismaService) {}

  async listMembers(caller: Caller): Promise<MemberListDto> {
    const members = await this.prisma.membership.findMany({
      where: { projectId: caller.projectId },
      orderBy: [{ name: 'asc' }, { id: 'asc' }],
      select: { id: true, name: true },
    });
    return { members: members.map((member) => ({ membershipId: member.id, name: member.name })) };
  }

  async listLabels(caller: Caller): Promise<LabelListDto> {
    const labels = await this.prisma.label.findMany({
      where: { projectId: caller.projectId },
      orderBy: [{ name: 'asc' }, { id: 'asc' }],
      select: { id: true, name: true, color: true },
    });
    return { labels };
  }
}
