import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyService } from './api-key.service';
import { RateLimitGuard } from './rate-limit.guard';
import { FixedWindowRateLimitStorage, RedisRateLimitStorage } from './rate-limit.storage';

@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        throttlers: [{ name: 'default', ttl: 60_000, limit: config.rateLimitPerMinute }],
        // Shared counters when several instances serve the same keys; the same fixed window in memory.
        storage: config.redisUrl ? new RedisRateLimitStorage(config.redisUrl) : new FixedWindowRateLimitStorage(),
      }),
    }),
  ],
  providers: [
    ApiKeyService,
    // Global guards run in this order: the rate limit, then the key and its permission.
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
})
export class AuthModule {}
