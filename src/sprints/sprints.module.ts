import { Module } from '@nestjs/common';
import { ReportsController } from './reports.controller';
import { SprintReportsService } from './sprint-reports.service';
import { SprintsController } from './sprints.controller';
import { SprintsService } from './sprints.service';

@Module({
  controllers: [SprintsController, ReportsController],
  providers: [SprintsService, SprintReportsService],
  // Activation and closing belong to the app side (src/admin).
  exports: [SprintsService],
})
export class SprintsModule {}
