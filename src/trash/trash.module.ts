import { Module } from '@nestjs/common';
import { AttachmentsModule } from '../attachments/attachments.module';
import { TasksModule } from '../tasks/tasks.module';
import { TrashController } from './trash.controller';
import { TrashService } from './trash.service';

/** The trash: list, restore, purge. Sending a task there is DELETE /api/v1/tasks/{taskId} (src/tasks). */
@Module({ imports: [TasksModule, AttachmentsModule], controllers: [TrashController], providers: [TrashService] })
export class TrashModule {}
