import { Module } from '@nestjs/common';
import { HistoryController } from './history.controller';
import { HistoryService } from './history.service';

/** Task history: recorded by the task, sprint, trash and admin services, read by clients. */
@Module({ controllers: [HistoryController], providers: [HistoryService], exports: [HistoryService] })
export class HistoryModule {}
