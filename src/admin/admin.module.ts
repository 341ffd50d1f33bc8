import { Module } from '@nestjs/common';
import { SprintsModule } from '../sprints/sprints.module';
import { AdminSprintsController } from './admin-sprints.controller';
import { AdminController } from './admin.controller';
import { AdminTokenGuard } from './admin-token.guard';
import { AdminService } from './admin.service';

@Module({
  imports: [SprintsModule],
  controllers: [AdminController, AdminSprintsController],
  providers: [AdminService, AdminTokenGuard],
})
export class AdminModule {}
