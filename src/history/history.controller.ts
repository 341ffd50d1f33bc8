import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { PageQueryDto } from '../common/pagination/page.dto';
import { HistoryPageDto } from './history-entry.dto';
import { HistoryService } from './history.service';

@ApiTags('tasks')
@ApiKeyAuthenticated()
@Controller('api/v1/tasks')
export class HistoryController {
  constructor(private readonly history: HistoryService) {}

  /** Every change made to a task, newest first: who, what, and each field's before and after. */
  @Get(':taskId/history')
  @ApiBadRequestResponse({ description: 'Invalid limit or cursor, or an unknown query parameter', type: ProblemDto })
  @ApiNotFoundResponse({ description: 'No such live task in this project', type: ProblemDto })
  listTaskHistory(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string, @Query() query: PageQueryDto): Promise<HistoryPageDto> {
    return this.history.list(caller, taskId, query);
  }
}
