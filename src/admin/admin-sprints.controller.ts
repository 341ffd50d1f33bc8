import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ProblemDto } from '../common/errors/problem.dto';
import { CloseSprintDto, SprintResponseDto } from '../sprints/sprint.dto';
import { SprintsService } from '../sprints/sprints.service';
import { SPRINT_STATUS_ROUTES } from './admin-interface';
import { AdminAuthenticated } from './admin-token.guard';

/** Sprint activation and closing: the app side, never through /api/v1. */
@ApiTags('admin')
@AdminAuthenticated()
@Controller(SPRINT_STATUS_ROUTES.path)
export class AdminSprintsController {
  constructor(private readonly sprints: SprintsService) {}

  /** A planned sprint becomes the project's active sprint (at most one per project). */
  @Post(SPRINT_STATUS_ROUTES.activate)
  @HttpCode(200)
  @ApiOkResponse({ type: SprintResponseDto })
  @ApiNotFoundResponse({ description: 'No such sprint', type: ProblemDto })
  @ApiConflictResponse({ description: 'Not planned, or the project already has an active sprint', type: ProblemDto })
  activateSprint(@Param('sprintId') sprintId: string): Promise<SprintResponseDto> {
    return this.sprints.activate(sprintId);
  }

  /** Closes the active sprint; open tasks move to moveOpenTasksTo or to no sprint. */
  @Post(SPRINT_STATUS_ROUTES.close)
  @HttpCode(200)
  @ApiOkResponse({ type: SprintResponseDto })
  @ApiNotFoundResponse({ description: 'No such sprint, or moveOpenTasksTo is not a sprint of the project', type: ProblemDto })
  @ApiConflictResponse({ description: 'The sprint is not active, or moveOpenTasksTo is not planned', type: ProblemDto })
  // The body may be left out: then the open tasks go to no sprint.
  @ApiBody({ type: CloseSprintDto, required: false })
  closeSprint(@Param('sprintId') sprintId: string, @Body() dto: CloseSprintDto): Promise<SprintResponseDto> {
    return this.sprints.close(sprintId, dto.moveOpenTasksTo ?? null);
  }
}
