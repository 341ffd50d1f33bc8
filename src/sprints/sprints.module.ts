import { Module } from '@nestjs/common';
import { SprintsController } from './sprints.controller';
import { SprintsService } from './sprints.service';

@Module({
  controllers: [SprintsController],
  providers: [SprintsService],
  // Activation and closing belong to the app side (src/admin).
  exports: [SprintsService],
})
export class SprintsModule {}
