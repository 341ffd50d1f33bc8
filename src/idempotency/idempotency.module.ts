import { Module } from '@nestjs/common';
import { IdempotencyService } from './idempotency.service';

/** Idempotency-Key: IdempotencyInterceptor (registered globally by AppModule) and the answers it stores. */
@Module({ providers: [IdempotencyService], exports: [IdempotencyService] })
export class IdempotencyModule {}
