import { Global, Module } from '@nestjs/common';
import { ChangeSignal } from './change-signal.service';
import { EventRetention } from './event-retention.service';
import { EventStreams } from './event-stream.service';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** The change feed (GET /api/v1/events, and its stream) and the signal of committed changes, which the webhook worker also waits on. */
@Global()
@Module({ controllers: [EventsController], providers: [EventsService, EventStreams, ChangeSignal, EventRetention], exports: [ChangeSignal] })
export class EventsModule {}
