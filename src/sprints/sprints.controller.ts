import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { IfMatch } from '../common/http/entity-tag';
import { NonEmptyBodyPipe } from '../common/validation/non-empty-body.pipe';
import { CreateSprintDto, SprintListDto, SprintResponseDto, UpdateSprintDto } from './sprint.dto';
import { SprintsService } from './sprints.service';

@ApiTags('sprints')
@ApiKeyAuthenticated()
@Controller('api/v1/sprints')
export class SprintsController {
  constructor(private readonly sprints: SprintsService) {}

  /** All sprints of the project, newest first. */
  @Get()
  list(@CurrentCaller() caller: Caller): Promise<SprintListDto> {
    return this.sprints.list(caller);
  }

  /** Creates a sprint; it starts planned. */
  @Post()
  @RequirePermission('sprints:manage')
  @ApiBadRequestResponse({
    description: 'Invalid or unknown field, status sent (read_only_field), or endDate before startDate (invalid_date_window)',
    type: ProblemDto,
  })
  create(@CurrentCaller() caller: Caller, @Body() dto: CreateSprintDto): Promise<SprintResponseDto> {
    return this.sprints.create(caller, dto);
  }

  /** One sprint of the project. */
  @Get(':sprintId')
  @ApiNotFoundResponse({ description: 'No such sprint in this project', type: ProblemDto })
  get(@CurrentCaller() caller: Caller, @Param('sprintId') sprintId: string): Promise<SprintResponseDto> {
    return this.sprints.get(caller, sprintId);
  }

  /** Changes name, goal or window; the window is checked on the resulting values. */
  @Patch(':sprintId')
  @RequirePermission('sprints:manage')
  @ApiBadRequestResponse({
    description: 'Empty body, invalid or unknown field, status sent, or a resulting endDate before startDate',
    type: ProblemDto,
  })
  @ApiNotFoundResponse({ description: 'No such sprint in this project', type: ProblemDto })
  update(
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
  delete(@CurrentCaller() caller: Caller, @Param('sprintId') sprintId: string, @IfMatch() ifMatch: string | undefined): Promise<void> {
    return this.sprints.delete(caller, sprintId, ifMatch);
  }
}
