import { Module } from '@nestjs/common';
import { HistoryModule } from '../history/history.module';
import { SprintsController } from './sprints.controller';
import { SprintsService } from './sprints.service';

@Module({
  imports: [HistoryModule],
  controllers: [SprintsController],
  providers: [SprintsService],
  // Activation and closing belong to the app side (src/admin).
  exports: [SprintsService],
})
export class SprintsModule {}
