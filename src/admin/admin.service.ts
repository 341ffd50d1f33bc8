import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { generateApiKey } from '../auth/api-keys';
import { APP_ACTOR, CHANGE_TIME, changesBetween, ChangeRecord } from '../changes/change';
import { ChangeLog, Recorded } from '../changes/change-log.service';
import { lockLabel, lockMember } from '../changes/locks';
import { isoTimestamp } from '../common/dates';
import { violates } from '../common/errors/database-errors';
import { conflict, notFound } from '../common/errors/problem';
import { PrismaService } from '../database/prisma.service';
import type { SqlTransaction } from '../database/sql';
import { Prisma } from '../generated/prisma/client';
import type { LabelDto, MemberDto } from '../projects/project-resources.dto';
import { LABEL_JSON, MEMBER_JSON } from '../projects/project-resources.sql';
import type {
  ApiKeyListDto,
  CreateApiKeyDto,
  CreateLabelDto,
  CreateMemberDto,
  CreateProjectDto,
  IssuedApiKeyDto,
  LabelResponseDto,
  MemberResponseDto,
  ProjectListDto,
  ProjectResponseDto,
  UpdateLabelDto,
  UpdateMemberDto,
} from './admin.dto';

/**
 * The app side of a project's set-up: projects, members, labels and keys. Members and labels
 * are shown inside tasks, so their creation and changes are changes of the project, recorded
 * by ChangeLog like any other (events member.* and label.*, decisions.md section 20), by the App.
 */
@Injectable()
export class AdminService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly changes: ChangeLog,
  ) {}

  async createProject(dto: CreateProjectDto): Promise<ProjectResponseDto> {
    const project = await this.prisma.project.create({ data: { name: dto.name } });
    return { project: { id: project.id, name: project.name, createdAt: project.createdAt.toISOString() } };
  }

  async getProject(projectId: string): Promise<ProjectResponseDto> {
    const project = await this.prisma.project.findUnique({ where: { id: projectId } });
    if (!project) throw notFound('Project');
    return { project: { id: project.id, name: project.name, createdAt: project.createdAt.toISOString() } };
  }

  /** Newest first. */
  async listProjects(): Promise<ProjectListDto> {
    const [row] = await this.prisma.sql.$queryRaw<ProjectListDto[]>`
      SELECT COALESCE(json_agg(json_build_object('id', p.id, 'name', p.name, 'createdAt', ${Prisma.raw(isoTimestamp('p.created_at'))})
                               ORDER BY p.created_at DESC, p.id DESC), '[]'::json) AS projects
        FROM projects p`;
    return row;
  }

  async createMember(projectId: string, dto: CreateMemberDto): Promise<MemberResponseDto> {
    await this.assertProject(projectId);
    const memberId = randomUUID();
    const recorded = await this.prisma.write((tx) =>
      this.record(
        tx,
        projectId,
        { member: memberId, action: 'created' },
        Prisma.sql`INSERT INTO memberships (id, project_id, name, created_at) VALUES (${memberId}::uuid, ${projectId}::uuid, ${dto.name}, ${CHANGE_TIME})`,
      ),
    );
    return { member: recorded.members[memberId] };
  }

  /** A name equal to the current one changes nothing: no write, no event. */
  async updateMember(membershipId: string, dto: UpdateMemberDto): Promise<MemberResponseDto> {
    const member = await this.prisma.write(async (tx) => {
      const [current] = await tx.$queryRaw<{ projectId: string; view: MemberDto }[]>(
        lockMember(membershipId, Prisma.sql`m.project_id::text AS "projectId", ${MEMBER_JSON} AS view`),
      );
      if (!current) throw notFound('Member');
      const name = dto.name ?? current.view.name;
      const changes = changesBetween(current.view, { name });
      if (changes.length === 0) return current.view;
      const recorded = await this.record(
        tx,
        current.projectId,
        { member: membershipId, action: 'updated', changes },
        Prisma.sql`UPDATE memberships SET name = ${name} WHERE id = ${membershipId}::uuid`,
      );
      return recorded.members[membershipId];
    });
    return { member };
  }

  async createLabel(projectId: string, dto: CreateLabelDto): Promise<LabelResponseDto> {
    await this.assertProject(projectId);
    const labelId = randomUUID();
    const recorded = await this.prisma
      .write((tx) =>
        this.record(
          tx,
          projectId,
          { label: labelId, action: 'created' },
          Prisma.sql`
            INSERT INTO labels (id, project_id, name, color, created_at)
            VALUES (${labelId}::uuid, ${projectId}::uuid, ${dto.name}, ${dto.color.toLowerCase()}, ${CHANGE_TIME})`,
        ),
      )
      .catch(labelNameTaken);
    return { label: recorded.labels[labelId] };
  }

  /** Values equal to the current ones change nothing: no write, no event. */
  async updateLabel(labelId: string, dto: UpdateLabelDto): Promise<LabelResponseDto> {
    const label = await this.prisma
      .write(async (tx) => {
        const [current] = await tx.$queryRaw<{ projectId: string; view: LabelDto }[]>(
          lockLabel(labelId, Prisma.sql`l.project_id::text AS "projectId", ${LABEL_JSON} AS view`),
        );
        if (!current) throw notFound('Label');
        const next = { name: dto.name ?? current.view.name, color: dto.color?.toLowerCase() ?? current.view.color };
        const changes = changesBetween(current.view, next);
        if (changes.length === 0) return current.view;
        const recorded = await this.record(
          tx,
          current.projectId,
          { label: labelId, action: 'updated', changes },
          Prisma.sql`UPDATE labels SET name = ${next.name}, color = ${next.color} WHERE id = ${labelId}::uuid`,
        );
        return recorded.labels[labelId];
      })
      .catch(labelNameTaken);
    return { label };
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

  /** The project's keys, revoked ones included, newest first; never a secret or its hash. */
  async listKeys(projectId: string): Promise<ApiKeyListDto> {
    await this.assertProject(projectId);
    const keys = await this.prisma.apiKey.findMany({
      where: { projectId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true, name: true, permissions: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true },
    });
    return {
      keys: keys.map((key) => ({
        ...key,
        createdAt: key.createdAt.toISOString(),
        lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
        revokedAt: key.revokedAt?.toISOString() ?? null,
      })),
    };
  }

  /** The key stops working at the next request: authentication reads revokedAt every time. */
  async revokeKey(keyId: string): Promise<void> {
    const { count } = await this.prisma.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: new Date() } });
    if (count === 0) throw notFound('Key');
  }

  /** One label or member change of the project, by the App, with its write (ChangeLog.record, which commits). */
  private record(tx: SqlTransaction, projectId: string, record: ChangeRecord, write: Prisma.Sql): Promise<Recorded> {
    return this.changes.record(tx, { projectId, actor: APP_ACTOR, records: [record] }, write);
  }

  private async assertProject(projectId: string): Promise<void> {
    if ((await this.prisma.project.count({ where: { id: projectId } })) === 0) throw notFound('Project');
  }
}

/** Label names are unique within a project (the database's unique index says so, also between two requests at once). */
function labelNameTaken(error: unknown): never {
  if (violates(error, 'labels_project_id_name_key')) throw conflict('conflict', 'The project has a label of that name');
  throw error;
}
