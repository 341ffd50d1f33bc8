import { Global, Logger, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { openDatabase } from './database-engine';
import { seedDemoProject } from './demo-seed';
import { applyMigrations } from './migrator';
import { PrismaService } from './prisma.service';

/**
 * Opens the database at start, applies pending migrations, seeds a demo project on a
 * new embedded database, and provides PrismaService to every module.
 */
@Global()
@Module({
  providers: [
    {
      provide: PrismaService,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig) => {
        const logger = new Logger('Database');
        const engine = await openDatabase(config);
        const migrations = await engine.withSession((session) => applyMigrations(session));
        if (migrations.applied.length) logger.log(`Applied migrations: ${migrations.applied.join(', ')}`);
        const prisma = new PrismaService(engine, { emitQueryEvents: config.emitQueryEvents });
        if (config.seedDemoProject && engine.kind === 'pglite' && migrations.wasEmpty) {
          await seedDemoProject(prisma, config.port);
        }
        logger.log(engine.kind === 'pglite' ? `Embedded database (PGlite) in ${config.dataDir}` : 'PostgreSQL database');
        return prisma;
      },
    },
  ],
  exports: [PrismaService],
})
export class DatabaseModule {}
