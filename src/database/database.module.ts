import { Global, Logger, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DatabaseEngine, openDatabase } from './database-engine';
import { EmbeddedMaintenance } from './embedded-maintenance';
import { applyMigrations } from './migrator';
import { PrismaService } from './prisma.service';

/** The database as the service found it at start: its engine, and whether it had no migration at all before (a new database). */
export class DatabaseStart {
  constructor(
    readonly engine: DatabaseEngine,
    readonly wasEmpty: boolean,
  ) {}
}

/**
 * Opens the database at start, applies pending migrations, and provides PrismaService to
 * every module (the demo project of a new embedded database is src/demo's part); on the
 * embedded database, vacuums it as autovacuum would (EmbeddedMaintenance).
 */
@Global()
@Module({
  providers: [
    {
      provide: DatabaseStart,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig) => {
        const logger = new Logger('Database');
        const engine = await openDatabase(config);
        const migrations = await engine.withSession((session) => applyMigrations(session));
        if (migrations.applied.length) logger.log(`Applied migrations: ${migrations.applied.join(', ')}`);
        logger.log(engine.kind === 'pglite' ? `Embedded database (PGlite) in ${config.dataDir}` : 'PostgreSQL database');
        return new DatabaseStart(engine, migrations.wasEmpty);
      },
    },
    {
      provide: PrismaService,
      inject: [DatabaseStart, APP_CONFIG],
      useFactory: (start: DatabaseStart, config: AppConfig) => new PrismaService(start.engine, { observeStatements: config.observeStatements }),
    },
    EmbeddedMaintenance,
  ],
  exports: [PrismaService, DatabaseStart],
})
export class DatabaseModule {}
