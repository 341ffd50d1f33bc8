import { Body, Controller, Delete, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiNotFoundResponse, ApiTags } from '@nestjs/swagger';
import { ProblemDto } from '../common/errors/problem.dto';
import { ShowsSecret } from '../common/http/browser-edges';
import { NonEmptyBodyPipe } from '../common/validation/non-empty-body.pipe';
import {
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
import { AdminAuthenticated } from './admin-token.guard';
import { AdminService } from './admin.service';

/** The product's app side (decisions.md section 8): enabled only when ADMIN_TOKEN is set. */
@ApiTags('admin')
@AdminAuthenticated()
@ApiBadRequestResponse({ description: 'Invalid body', type: ProblemDto })
@Controller('admin/v1')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  /** Creates a project. */
  @Post('projects')
  createProject(@Body() dto: CreateProjectDto): Promise<ProjectResponseDto> {
    return this.admin.createProject(dto);
  }

  /** Adds a member to a project: tasks are assigned to its membershipId. */
  @Post('projects/:projectId/members')
  @ApiNotFoundResponse({ description: 'No such project', type: ProblemDto })
  createMember(@Param('projectId') projectId: string, @Body() dto: CreateMemberDto): Promise<MemberResponseDto> {
    return this.admin.createMember(projectId, dto);
  }

  /** Adds a label to a project; names are unique within it. */
  @Post('projects/:projectId/labels')
  @ApiNotFoundResponse({ description: 'No such project', type: ProblemDto })
  @ApiConflictResponse({ description: 'The project has a label of that name', type: ProblemDto })
  createLabel(@Param('projectId') projectId: string, @Body() dto: CreateLabelDto): Promise<LabelResponseDto> {
    return this.admin.createLabel(projectId, dto);
  }

  /** Renames a label or changes its colour: every task carrying it shows the new one. */
  @Patch('labels/:labelId')
  @ApiNotFoundResponse({ description: 'No such label', type: ProblemDto })
  @ApiConflictResponse({ description: 'The project has another label of that name', type: ProblemDto })
  updateLabel(@Param('labelId') labelId: string, @Body(NonEmptyBodyPipe) dto: UpdateLabelDto): Promise<LabelResponseDto> {
    return this.admin.updateLabel(labelId, dto);
  }

  /** Issues a key; its secret is in this answer only. */
  @Post('projects/:projectId/keys')
  @ShowsSecret()
  @ApiNotFoundResponse({ description: 'No such project', type: ProblemDto })
  issueApiKey(@Param('projectId') projectId: string, @Body() dto: CreateApiKeyDto): Promise<IssuedApiKeyDto> {
    return this.admin.issueKey(projectId, dto);
  }

  /** Revokes a key: it stops working at once. */
  @Delete('keys/:keyId')
  @HttpCode(204)
  @ApiNotFoundResponse({ description: 'No such key, or already revoked', type: ProblemDto })
  revokeApiKey(@Param('keyId') keyId: string): Promise<void> {
    return this.admin.revokeKey(keyId);
  }
}
