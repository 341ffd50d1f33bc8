import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { LabelListDto, MemberListDto } from './project-resources.dto';
import { ProjectsService } from './projects.service';

@ApiTags('members and labels')
@ApiKeyAuthenticated()
@Controller('api/v1')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  /** The project's members, by name: their `membershipId` is what `assigneeId` takes. */
  @Get('members')
  listMembers(@CurrentCaller() caller: Caller): Promise<MemberListDto> {
    return this.projects.listMembers(caller);
  }

  /** The project's labels, by name: their `id` is what `labelIds` takes. */
  @Get('labels')
  listLabels(@CurrentCaller() caller: Caller): Promise<LabelListDto> {
    return this.projects.listLabels(caller);
  }
}
