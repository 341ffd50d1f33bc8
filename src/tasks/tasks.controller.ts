import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller, RequirePermission } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { IfMatch } from '../common/http/entity-tag';
import { CreatedAt } from '../common/http/location';
import { JSON_CONTENT_TYPE, type JsonText } from '../common/http/json-text';
import { NonEmptyBodyPipe } from '../common/validation/non-empty-body.pipe';
import {
  BULK_CREATE_TASKS_EXAMPLE,
  BulkCreatedTasksDto,
  BulkCreateTasksDto,
  CREATE_TASK_EXAMPLE,
  CreateTaskDto,
  ListTasksQueryDto,
  MovedTasksDto,
  MoveTaskDto,
  MoveTasksDto,
  TaskListDto,
  TaskResponseDto,
  UPDATE_TASK_EXAMPLE,
  UpdateTaskDto,
} from './task.dto';
import { TaskOrderService } from './task-order.service';
import { TasksService } from './tasks.service';

@ApiTags('tasks')
@ApiKeyAuthenticated()
@Controller('api/v1/tasks')
export class TasksController {
  constructor(
    private readonly tasks: TasksService,
    private readonly order: TaskOrderService,
  ) {}

  /** The project's live tasks, newest first, filtered and paginated by cursor. */
  @Get()
  @Header('Content-Type', JSON_CONTENT_TYPE)
  @ApiOkResponse({ type: TaskListDto })
  @ApiBadRequestResponse({ description: 'An invalid filter, limit or cursor, or an unknown query parameter', type: ProblemDto })
  listTasks(@CurrentCaller() caller: Caller, @Query() query: ListTasksQueryDto): Promise<JsonText<TaskListDto>> {
    return this.tasks.list(caller, query);
  }

  /** Creates a task; answers it in full, with its address in Location. */
  @Post()
  @RequirePermission('tasks:create')
  @ApiBody({ type: CreateTaskDto, examples: { task: { value: CREATE_TASK_EXAMPLE } } })
  @CreatedAt(TaskResponseDto, '/api/v1/tasks/{taskId}', (answer) => `/api/v1/tasks/${answer.task.id}`)
  @ApiBadRequestResponse({ description: 'Invalid or unknown field, or parentId names a subtask (nesting_too_deep)', type: ProblemDto })
  @ApiNotFoundResponse({
    description: 'assigneeId, labelIds, sprintId or parentId is not in this project, or the sprint is closed',
    type: ProblemDto,
  })
  createTask(@CurrentCaller() caller: Caller, @Body() dto: CreateTaskDto): Promise<TaskResponseDto> {
    return this.tasks.create(caller, dto);
  }

  /** Creates 1 to 100 tasks at once, all or none; answers them in full, in the order sent. */
  @Post('bulk')
  @RequirePermission('tasks:create')
  @ApiBody({ type: BulkCreateTasksDto, examples: { tasks: { value: BULK_CREATE_TASKS_EXAMPLE } } })
  @ApiCreatedResponse({ type: BulkCreatedTasksDto })
  @ApiBadRequestResponse({ description: 'An invalid item: errors[].field names it, as tasks[3].title', type: ProblemDto })
  @ApiNotFoundResponse({
    description: 'An item refers to something not in this project: errors[].field names it, as tasks[3].sprintId',
    type: ProblemDto,
  })
  bulkCreateTasks(@CurrentCaller() caller: Caller, @Body() dto: BulkCreateTasksDto): Promise<BulkCreatedTasksDto> {
    return this.tasks.bulkCreate(caller, dto);
  }

  /**
   * Makes 1 to 100 tasks contiguous at one place of the backlog order, in the order given, all or
   * none: right before or after another live task, or at the top or the bottom.
   */
  @Post('move')
  @HttpCode(200)
  @RequirePermission('tasks:edit')
  @ApiOkResponse({ type: MovedTasksDto })
  @ApiBadRequestResponse({ description: 'Not exactly one of before, after and to; a task twice; a place among the tasks moved', type: ProblemDto })
  @ApiNotFoundResponse({ description: 'A task, or the task to place them against, is not a live task of this project', type: ProblemDto })
  moveTasks(@CurrentCaller() caller: Caller, @Body() dto: MoveTasksDto): Promise<MovedTasksDto> {
    return this.order.moveMany(caller, dto);
  }

  /** A task in full, with its description and both directions of its dependencies. */
  @Get(':taskId')
  @ApiNotFoundResponse({ description: 'No such task in this project, or it is in the trash', type: ProblemDto })
  getTask(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string): Promise<TaskResponseDto> {
    return this.tasks.get(caller, taskId);
  }

  /** Changes the fields sent; null clears. Each real change is recorded in the task's history. */
  @Patch(':taskId')
  @RequirePermission('tasks:edit')
  @ApiBody({ type: UpdateTaskDto, examples: { start: { value: UPDATE_TASK_EXAMPLE } } })
  @ApiBadRequestResponse({ description: 'Empty body, invalid or unknown field, or parentId (read-only)', type: ProblemDto })
  @ApiNotFoundResponse({ description: 'No such live task, or a referenced id is not in this project, or the sprint is closed', type: ProblemDto })
  updateTask(
    @CurrentCaller() caller: Caller,
    @Param('taskId') taskId: string,
    @Body(NonEmptyBodyPipe) dto: UpdateTaskDto,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<TaskResponseDto> {
    return this.tasks.update(caller, taskId, dto, ifMatch);
  }

  /**
   * Places the task right before or after another live task of the project, or at the top or
   * the bottom of the backlog order; answers it with its new rank.
   */
  @Post(':taskId/move')
  @HttpCode(200)
  @RequirePermission('tasks:edit')
  @ApiOkResponse({ type: TaskResponseDto })
  @ApiBadRequestResponse({ description: 'Not exactly one of before, after and to, or the task itself as the place', type: ProblemDto })
  @ApiNotFoundResponse({ description: 'The task, or the task to place it against, is not a live task of this project', type: ProblemDto })
  moveTask(
    @CurrentCaller() caller: Caller,
    @Param('taskId') taskId: string,
    @Body() dto: MoveTaskDto,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<TaskResponseDto> {
    return this.order.move(caller, taskId, dto, ifMatch);
  }

  /** Sends the task and its subtasks to the trash (DELETE /api/v1/trash/{taskId} destroys it). */
  @Delete(':taskId')
  @HttpCode(204)
  @RequirePermission('tasks:delete')
  @ApiNotFoundResponse({ description: 'No such live task in this project', type: ProblemDto })
  trashTask(@CurrentCaller() caller: Caller, @Param('taskId') taskId: string, @IfMatch() ifMatch: string | undefined): Promise<void> {
    return this.tasks.trash(caller, taskId, ifMatch);
  }
}
