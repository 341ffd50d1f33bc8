import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiNotFoundResponse, ApiTags } from '@nestjs/swagger';
import { ProblemDto } from '../common/errors/problem.dto';
import { ShowsSecret } from '../common/http/browser-edges';
import { CreatedAt } from '../common/http/location';
import { NonEmptyBodyPipe } from '../common/validation/non-empty-body.pipe';
import {
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
import { AdminAuthenticated } from './admin-token.guard';
import { AdminService } from './admin.service';

/** The product's app side (decisions.md sections 8 and 21): enabled only when ADMIN_TOKEN is set. */
@ApiTags('admin')
@AdminAuthenticated()
@ApiBadRequestResponse({ description: 'Invalid body', type: ProblemDto })
@Controller('admin/v1')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  /** Creates a project; its address is in Location. */
  @Post('projects')
  @CreatedAt(ProjectResponseDto, '/admin/v1/projects/{projectId}', (answer) => `/admin/v1/projects/${answer.project.id}`)
  createProject(@Body() dto: CreateProjectDto): Promise<ProjectResponseDto> {
    return this.admin.createProject(dto);
  }

  /** Every project of the deployment, newest first. */
  @Get('projects')
  listProjects(): Promise<ProjectListDto> {
    return this.admin.listProjects();
  }

  /** One project: what a project's create answers, at the address its Location names. */
  @Get('projects/:projectId')
  @ApiNotFoundResponse({ description: 'No such project', type: ProblemDto })
  getProject(@Param('projectId') projectId: string): Promise<ProjectResponseDto> {
    return this.admin.getProject(projectId);
  }

  /** Adds a member to a project: tasks are assigned to its membershipId. Emits member.created. */
  @Post('projects/:projectId/members')
  @CreatedAt(MemberResponseDto, '/admin/v1/members/{membershipId}', (answer) => `/admin/v1/members/${answer.member.membershipId}`)
  @ApiNotFoundResponse({ description: 'No such project', type: ProblemDto })
  createMember(@Param('projectId') projectId: string, @Body() dto: CreateMemberDto): Promise<MemberResponseDto> {
    return this.admin.createMember(projectId, dto);
  }

  /**
   * Renames a member: every task assigned to it shows the new name. Emits member.updated (with
   * `changes`); a name equal to the current one changes nothing and emits nothing.
   */
  @Patch('members/:membershipId')
  @ApiNotFoundResponse({ description: 'No such member', type: ProblemDto })
  updateMember(@Param('membershipId') membershipId: string, @Body(NonEmptyBodyPipe) dto: UpdateMemberDto): Promise<MemberResponseDto> {
    return this.admin.updateMember(membershipId, dto);
  }

  /** Adds a label to a project; names are unique within it. Emits label.created. */
  @Post('projects/:projectId/labels')
  @CreatedAt(LabelResponseDto, '/admin/v1/labels/{labelId}', (answer) => `/admin/v1/labels/${answer.label.id}`)
  @ApiNotFoundResponse({ description: 'No such project', type: ProblemDto })
  @ApiConflictResponse({ description: 'The project has a label of that name', type: ProblemDto })
  createLabel(@Param('projectId') projectId: string, @Body() dto: CreateLabelDto): Promise<LabelResponseDto> {
    return this.admin.createLabel(projectId, dto);
  }

  /**
   * Renames a label or changes its colour: every task carrying it shows the new one. Emits
   * label.updated (with `changes`); values equal to the current ones change nothing and emit nothing.
   */
  @Patch('labels/:labelId')
  @ApiNotFoundResponse({ description: 'No such label', type: ProblemDto })
  @ApiConflictResponse({ description: 'The project has another label of that name', type: ProblemDto })
  updateLabel(@Param('labelId') labelId: string, @Body(NonEmptyBodyPipe) dto: UpdateLabelDto): Promise<LabelResponseDto> {
    return this.admin.updateLabel(labelId, dto);
  }

  /** Issues a key; its secret is in this answer only. */
  @Post('projects/:projectId/keys')
  @ShowsSecret()
  @CreatedAt(IssuedApiKeyDto, '/admin/v1/keys/{keyId}', (answer) => `/admin/v1/keys/${answer.key.id}`)
  @ApiNotFoundResponse({ description: 'No such project', type: ProblemDto })
  issueApiKey(@Param('projectId') projectId: string, @Body() dto: CreateApiKeyDto): Promise<IssuedApiKeyDto> {
    return this.admin.issueKey(projectId, dto);
  }

  /**
   * The project's keys, newest first, revoked ones included: when each was last used (recorded
   * at most once a minute) and revoked. Never a secret or its hash.
   */
  @Get('projects/:projectId/keys')
  @ApiNotFoundResponse({ description: 'No such project', type: ProblemDto })
  listApiKeys(@Param('projectId') projectId: string): Promise<ApiKeyListDto> {
    return this.admin.listKeys(projectId);
  }

  /** Revokes a key: it stops working at once. */
  @Delete('keys/:keyId')
  @HttpCode(204)
  @ApiNotFoundResponse({ description: 'No such key, or already revoked', type: ProblemDto })
  revokeApiKey(@Param('keyId') keyId: string): Promise<void> {
    return this.admin.revokeKey(keyId);
  }
}
