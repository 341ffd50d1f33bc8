import { Module } from '@nestjs/common';
import { CommentsController } from './comments.controller';
import { CommentsService } from './comments.service';

/** A task's comments (decisions.md section 23). */
@Module({
  controllers: [CommentsController],
  providers: [CommentsService],
  // The demo seed writes its comments through the service (src/demo).
  exports: [CommentsService],
})
export class CommentsModule {}
