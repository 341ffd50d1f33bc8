import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiNotFoundResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { IfMatch } from '../common/http/entity-tag';
import { NonEmptyBodyPipe } from '../common/validation/non-empty-body.pipe';
import { CREATE_SPRINT_EXAMPLE, CreateSprintDto, SprintListDto, SprintResponseDto, UPDATE_SPRINT_EXAMPLE, UpdateSprintDto } from './sprint.dto';
import { SprintsService } from './sprints.service';

@ApiTags('sprints')
@ApiKeyAuthenticated()
@Controller('api/v1/sprints')
export class SprintsController {
  constructor(private readonly sprints: SprintsService) {}

  /** All sprints of the project, newest first. */
  @Get()
  listSprints(@CurrentCaller() caller: Caller): Promise<SprintListDto> {
    return this.sprints.list(caller);
  }

  /** Creates a sprint; it starts planned. */
  @Post()
  @RequirePermission('sprints:manage')
  @ApiBody({ type: CreateSprintDto, examples: { sprint: { value: CREATE_SPRINT_EXAMPLE } } })
  @ApiBadRequestResponse({
    description: 'Invalid or unknown field, status sent (read_only_field), or endDate before startDate (invalid_date_window)',
    type: ProblemDto,
  })
  createSprint(@CurrentCaller() caller: Caller, @Body() dto: CreateSprintDto): Promise<SprintResponseDto> {
    return this.sprints.create(caller, dto);
  }

  /** One sprint of the project. */
  @Get(':sprintId')
  @ApiNotFoundResponse({ description: 'No such sprint in this project', type: ProblemDto })
  getSprint(@CurrentCaller() caller: Caller, @Param('sprintId') sprintId: string): Promise<SprintResponseDto> {
    return this.sprints.get(caller, sprintId);
  }

  /** Changes name, goal or window; the window is checked on the resulting values. */
  @Patch(':sprintId')
  @RequirePermission('sprints:manage')
  @ApiBody({ type: UpdateSprintDto, examples: { goal: { value: UPDATE_SPRINT_EXAMPLE } } })
  @ApiBadRequestResponse({
    description: 'Empty body, invalid or unknown field, status sent, or a resulting endDate before startDate',
    type: ProblemDto,
  })
  @ApiNotFoundResponse({ description: 'No such sprint in this project', type: ProblemDto })
  updateSprint(
    @CurrentCaller() caller: Caller,
    @Param('sprintId') sprintId: string,
    @Body(NonEmptyBodyPipe) dto: UpdateSprintDto,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<SprintResponseDto> {
    return this.sprints.update(caller, sprintId, dto, ifMatch);
  }

  /** Deletes the sprint; its tasks survive without a sprint. */
  @Delete(':sprintId')
  @HttpCode(204)
  @RequirePermission('sprints:manage')
  @ApiNotFoundResponse({ description: 'No such sprint in this project', type: ProblemDto })
  deleteSprint(@CurrentCaller() caller: Caller, @Param('sprintId') sprintId: string, @IfMatch() ifMatch: string | undefined): Promise<void> {
    return this.sprints.delete(caller, sprintId, ifMatch);
  }
}
