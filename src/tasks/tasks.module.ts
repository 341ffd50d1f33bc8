import { Module } from '@nestjs/common';
import { DependenciesController } from './dependencies.controller';
import { DependenciesService } from './dependencies.service';
import { FilterCompiler } from './finding/filter-compiler';
import { TaskReader } from './task-reader.service';
import { TaskListCache } from './task-list-cache';
import { TaskListDeltas } from './task-list-deltas.service';
import { TasksController } from './tasks.controller';
import { TaskOrderService } from './task-order.service';
import { TasksService } from './tasks.service';

@Module({
  controllers: [TasksController, DependenciesController],
  providers: [FilterCompiler, TaskOrderService, TasksService, DependenciesService, TaskReader, TaskListCache, TaskListDeltas],
  // TasksService, DependenciesService and TaskOrderService: the demo seed writes through them (src/demo).
  exports: [FilterCompiler, TaskReader, TasksService, DependenciesService, TaskOrderService],
})
export class TasksModule {}
