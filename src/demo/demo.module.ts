import { Module } from '@nestjs/common';
import { ProjectSetupModule } from '../admin/project-setup.module';
import { AttachmentsModule } from '../attachments/attachments.module';
import { CommentsModule } from '../comments/comments.module';
import { SprintsModule } from '../sprints/sprints.module';
import { TasksModule } from '../tasks/tasks.module';
import { DemoSeed } from './demo-seed';

/** The demo project of a new embedded database (decisions.md section 9), written through the services. */
@Module({ imports: [ProjectSetupModule, TasksModule, SprintsModule, CommentsModule, AttachmentsModule], providers: [DemoSeed] })
export class DemoModule {}
