import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { DependenciesService } from './dependencies.service';
import { AddDependencyDto, TaskResponseDto } from './task.dto';

@ApiTags('tasks')
@ApiKeyAuthenticated()
@Controller('api/v1/tasks/:taskId/dependencies')
export class DependenciesController {
  constructor(private readonly dependencies: DependenciesService) {}

  /** Makes the task blocked by another task of the project; answers the task in full. */
  @Post()
  @RequirePermission('tasks:edit')
  @ApiCreatedResponse({ type: TaskResponseDto })
  @ApiBadRequestResponse({ description: 'A task cannot be blocked by itself', type: ProblemDto })
  @ApiNotFoundResponse({ description: 'Either task is not a live task of this project', type: ProblemDto })
  @ApiConflictResponse({ description: 'dependency_exists, or dependency_cycle when it would close a cycle', type: ProblemDto })
  addDependency(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string, @Body() dto: AddDependencyDto): Promise<TaskResponseDto> {
    return this.dependencies.add(caller, taskId, dto.blockedById);
  }

  /** Removes "the task is blocked by blockedById". */
  @Delete(':blockedById')
  @HttpCode(204)
  @RequirePermission('tasks:edit')
  @ApiParam({ name: 'blockedById', description: 'The task that blocks it' })
  @ApiNotFoundResponse({ description: 'No such dependency between live tasks of this project', type: ProblemDto })
  removeDependency(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string, @Param('blockedById') blockedById: string): Promise<void> {
    return this.dependencies.remove(caller, taskId, blockedById);
  }
}
