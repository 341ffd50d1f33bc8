import { Global, Module } from '@nestjs/common';
import { ChangeLog } from './change-log.service';

/** ChangeLog, for every module that changes tasks or sprints. */
@Global()
@Module({ providers: [ChangeLog], exports: [ChangeLog] })
export class ChangeLogModule {}
