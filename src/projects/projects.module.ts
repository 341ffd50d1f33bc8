import { Module } from '@nestjs/common';
import { ProjectsController } from './projects.controller';
import { ProjectsService } from './projects.service';

/** A project's members and labels, read through /api/v1 (they are set up through /admin/v1). */
@Module({ controllers: [ProjectsController], providers: [ProjectsService] })
export class ProjectsModule {}
