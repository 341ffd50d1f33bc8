import { Module } from '@nestjs/common';
import { HistoryController } from './history.controller';
import { HistoryService } from './history.service';

/** Task history, as clients read it (ChangeLog in src/changes records it with each change). */
@Module({ controllers: [HistoryController], providers: [HistoryService] })
export class HistoryModule {}
