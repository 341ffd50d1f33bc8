import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { IfMatch } from '../common/http/entity-tag';
import { CreatedAt } from '../common/http/location';
import { JSON_CONTENT_TYPE, type JsonText } from '../common/http/json-text';
import { NonEmptyBodyPipe } from '../common/validation/non-empty-body.pipe';
import { CREATE_SPRINT_EXAMPLE, CreateSprintDto, SprintListDto, SprintResponseDto, UPDATE_SPRINT_EXAMPLE, UpdateSprintDto } from './sprint.dto';
import { BurndownDto, SprintReportResponseDto } from './sprint-report.dto';
import { SprintReportsService } from './sprint-reports.service';
import { SprintsService } from './sprints.service';

@ApiTags('sprints')
@ApiKeyAuthenticated()
@Controller('api/v1/sprints')
export class SprintsController {
  constructor(
    private readonly sprints: SprintsService,
    private readonly reports: SprintReportsService,
  ) {}

  /** All sprints of the project, newest first. */
  @Get()
  listSprints(@CurrentCaller() caller: Caller): Promise<SprintListDto> {
    return this.sprints.list(caller);
  }

  /** Creates a sprint; it starts planned. Answers it, with its address in Location. */
  @Post()
  @RequirePermission('sprints:manage')
  @CreatedAt(SprintResponseDto, '/api/v1/sprints/{sprintId}', (answer) => `/api/v1/sprints/${answer.sprint.id}`)
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

  /**
   * What the sprint committed to and delivered: the scope at activation, what was added, removed,
   * re-estimated, completed, cancelled and carried over. A closed sprint's report is frozen.
   */
  @Get(':sprintId/report')
  @Header('Content-Type', JSON_CONTENT_TYPE)
  @ApiOkResponse({ type: SprintReportResponseDto })
  @ApiNotFoundResponse({ description: 'No such sprint in this project', type: ProblemDto })
  getSprintReport(@CurrentCaller() caller: Caller, @Param('sprintId') sprintId: string): Promise<JsonText<SprintReportResponseDto>> {
    return this.reports.report(caller, sprintId);
  }

  /**
   * The sprint's scope, completed, cancelled and remaining work at the end of each Madrid day since
   * its activation, with the ideal line; for an active sprint, the days ahead up to its endDate too.
   */
  @Get(':sprintId/burndown')
  @Header('Content-Type', JSON_CONTENT_TYPE)
  @ApiOkResponse({ type: BurndownDto })
  @ApiNotFoundResponse({ description: 'No such sprint in this project', type: ProblemDto })
  @ApiConflictResponse({ description: 'The sprint is planned: its burndown starts at its activation', type: ProblemDto })
  getSprintBurndown(@CurrentCaller() caller: Caller, @Param('sprintId') sprintId: string): Promise<JsonText<BurndownDto>> {
    return this.reports.burndown(caller, sprintId);
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
