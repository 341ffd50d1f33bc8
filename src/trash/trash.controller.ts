import { Controller, Delete, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { JSON_CONTENT_TYPE, type JsonText } from '../common/http/json-text';
import { TaskResponseDto } from '../tasks/task.dto';
import { TrashListDto, TrashListQueryDto } from './trash.dto';
import { TrashService } from './trash.service';

@ApiTags('trash')
@ApiKeyAuthenticated()
@Controller('api/v1/trash')
export class TrashController {
  constructor(private readonly trash: TrashService) {}

  /** Tasks in the trash, most recently deleted first, optionally filtered. */
  @Get()
  @Header('Content-Type', JSON_CONTENT_TYPE)
  @ApiOkResponse({ type: TrashListDto })
  @ApiBadRequestResponse({ description: 'An invalid filter, search, sort, limit or cursor, or an unknown query parameter', type: ProblemDto })
  listTrash(@CurrentCaller() caller: Caller, @Query() query: TrashListQueryDto): Promise<JsonText<TrashListDto>> {
    return this.trash.list(caller, query);
  }

  /** Brings a task back, with the subtasks that were trashed with it. */
  @Post(':taskId/restore')
  @HttpCode(200)
  @RequirePermission('tasks:delete')
  @ApiOkResponse({ type: TaskResponseDto })
  @ApiNotFoundResponse({ description: 'No such task in the trash of this project', type: ProblemDto })
  @ApiConflictResponse({ description: 'A subtask whose parent is still in the trash', type: ProblemDto })
  restoreTask(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string): Promise<TaskResponseDto> {
    return this.trash.restore(caller, taskId);
  }

  /** Destroys a trashed task for good, with its subtasks, history and dependencies. */
  @Delete(':taskId')
  @HttpCode(204)
  @RequirePermission('tasks:delete')
  @ApiNotFoundResponse({ description: 'No such task in the trash (a live task is not in the trash)', type: ProblemDto })
  purgeTask(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string): Promise<void> {
    return this.trash.purge(caller, taskId);
  }
}
