import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { AdminInterfaceOffModule } from './admin/admin-interface';
import { AdminModule } from './admin/admin.module';
import { AttachmentsModule } from './attachments/attachments.module';
import { AuthModule } from './auth/auth.module';
import { ChangeLogModule } from './changes/change-log.module';
import { CommentsModule } from './comments/comments.module';
import { CommonModule } from './common/common.module';
import { ProblemDetailsFilter } from './common/errors/problem-details.filter';
import { EntityTagInterceptor } from './common/http/entity-tag.interceptor';
import { UnknownRouteModule } from './common/http/routes';
import { RequestShapeInterceptor } from './common/http/request-shape.interceptor';
import { PathIdPipe } from './common/validation/path-ids.pipe';
import { createValidationPipe } from './common/validation/validation.pipe';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { DemoModule } from './demo/demo.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { HistoryModule } from './history/history.module';
import { IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { LifecycleModule } from './lifecycle/lifecycle.module';
import { MetricsModule } from './metrics/metrics.module';
import { ProjectsModule } from './projects/projects.module';
import { SprintsModule } from './sprints/sprints.module';
import { TasksModule } from './tasks/tasks.module';
import { TrashModule } from './trash/trash.module';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LifecycleModule,
        DatabaseModule,
        MetricsModule,
        CommonModule,
        ChangeLogModule,
        IdempotencyModule,
        AuthModule,
        HealthModule,
        ProjectsModule,
        TasksModule,
        HistoryModule,
        CommentsModule,
        AttachmentsModule,
        SprintsModule,
        TrashModule,
        EventsModule,
        DemoModule,
        WebhooksModule,
        // Without ADMIN_TOKEN the admin interface does not exist: every /admin path is 404 (saying why).
        config.adminToken ? AdminModule : AdminInterfaceOffModule,
        // Last: its catch-all route (404, 405) must come after every real one.
        UnknownRouteModule,
      ],
      providers: [
        { provide: APP_PIPE, useFactory: createValidationPipe },
        // Path ids that are not UUIDs name nothing: every route answers them its own 404.
        { provide: APP_PIPE, useClass: PathIdPipe },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
        // Global interceptors run in this order, the first outermost: Idempotency-Key before
        // anything reads the body, ETags around the serialised answer.
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
        { provide: APP_INTERCEPTOR, useClass: RequestShapeInterceptor },
        { provide: APP_INTERCEPTOR, useClass: EntityTagInterceptor },
      ],
    };
  }
}
