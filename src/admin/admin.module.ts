import { Module } from '@nestjs/common';
import { SprintsModule } from '../sprints/sprints.module';
import { AdminSprintsController } from './admin-sprints.controller';
import { AdminController } from './admin.controller';
import { AdminTokenGuard } from './admin-token.guard';
import { ProjectSetupModule } from './project-setup.module';

@Module({
  imports: [SprintsModule, ProjectSetupModule],
  controllers: [AdminController, AdminSprintsController],
  providers: [AdminTokenGuard],
})
export class AdminModule {}
