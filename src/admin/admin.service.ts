import { Injectable } from '@nestjs/common';
import { generateApiKey } from '../auth/api-keys';
import { notFound } from '../common/errors/problem';
import { isUuid } from '../common/ids';
import { PrismaService } from '../database/prisma.service';
import type {
  CreateApiKeyDto,
  CreateLabelDto,
  CreateMemberDto,
  CreateProjectDto,
  IssuedApiKeyDto,
  LabelResponseDto,
  UpdateLabelDto,
  MemberResponseDto,
  ProjectResponseDto,
} from './admin.dto';

/** The app side of a project's set-up: projects, members, labels and keys. */
@Injectable()
export class AdminService {
  constructor(private readonly prisma: PrismaService) {}

  async createProject(dto: CreateProjectDto): Promise<ProjectResponseDto> {
    const project = await this.prisma.project.create({ data: { name: dto.name } });
    return { project: { id: project.id, name: project.name, createdAt: project.createdAt.toISOString() } };
  }

  async createMember(projectId: string, dto: CreateMemberDto): Promise<MemberResponseDto> {
    await this.assertProject(projectId);
    const member = await this.prisma.membership.create({ data: { projectId, name: dto.name } });
    return { member: { membershipId: member.id, name: member.name } };
  }

  async createLabel(projectId: string, dto: CreateLabelDto): Promise<LabelResponseDto> {
    await this.assertProject(projectId);
    const label = await this.prisma.label.create({
      data: { projectId, name: dto.name, color: dto.color.toLowerCase() },
      select: { id: true, name: true, color: true },
    });
    return { label };
  }

  async updateLabel(labelId: string, dto: UpdateLabelDto): Promise<LabelResponseDto> {
    const { count } = isUuid(labelId)
      ? await this.prisma.label.updateMany({ where: { id: labelId }, data: { name: dto.name, color: dto.color?.toLowerCase() } })
      : { count: 0 };
    if (count === 0) throw notFound('Label');
    return { label: await this.prisma.label.findUniqueOrThrow({ where: { id: labelId }, select: { id: true, name: true, color: true } }) };
  }

  async issueKey(projectId: string, dto: CreateApiKeyDto): Promise<IssuedApiKeyDto> {
    await this.assertProject(projectId);
    const generated = generateApiKey();
    const key = await this.prisma.apiKey.create({
      data: { projectId, name: dto.name, permissions: dto.permissions, prefix: generated.prefix, secretHash: generated.secretHash },
    });
    return {
      key: { id: key.id, name: key.name, permissions: key.permissions, prefix: key.prefix, createdAt: key.createdAt.toISOString() },
      secret: generated.secret,
    };
  }

  /** The key stops working at the next request: authentication reads revokedAt every time. */
  async revokeKey(keyId: string): Promise<void> {
    const { count } = isUuid(keyId)
      ? await this.prisma.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: new Date() } })
      : { count: 0 };
    if (count === 0) throw notFound('Key');
  }

  private async assertProject(projectId: string): Promise<void> {
    const exists = isUuid(projectId) && (await this.prisma.project.count({ where: { id: projectId } })) > 0;
    if (!exists) throw notFound('Project');
  }
}
