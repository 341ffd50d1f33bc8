import { Module } from '@nestjs/common';
import { HistoryModule } from '../history/history.module';
import { DependenciesController } from './dependencies.controller';
import { DependenciesService } from './dependencies.service';
import { TaskReader } from './task-reader.service';
import { TaskListCache } from './task-list-cache';
import { TasksController } from './tasks.controller';
import { TasksService } from './tasks.service';

@Module({
  imports: [HistoryModule],
  controllers: [TasksController, DependenciesController],
  providers: [TasksService, DependenciesService, TaskReader, TaskListCache],
  // TasksService and DependenciesService: the demo seed writes through them (src/demo).
  exports: [TaskReader, TasksService, DependenciesService],
})
export class TasksModule {}
