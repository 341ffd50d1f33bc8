import { Module } from '@nestjs/common';
import { AdminService } from './admin.service';

/**
 * The admin service without its HTTP interface: AdminModule serves it only when ADMIN_TOKEN is
 * set, while the demo seed (src/demo) creates its project, members, labels and key through it
 * whatever the token, so that they are recorded as any other (label.created, member.created).
 */
@Module({ providers: [AdminService], exports: [AdminService] })
export class ProjectSetupModule {}
