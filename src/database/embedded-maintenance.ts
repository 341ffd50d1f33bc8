import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PrismaService } from './prisma.service';

/** How often the embedded database's tables are looked at (autovacuum's default naptime). */
const EVERY_MS = 60_000;

/**
 * The embedded database's autovacuum. PGlite runs none, so without this its tables are never
 * vacuumed nor analyzed: dead rows pile up, and the planner never learns their size. Measured
 * on PGlite, the service's create and update in a loop: with the tasks table never analyzed,
 * 3.5 and 4.5 ms of CPU each at 1 500 tasks and 5.6 and 8.7 ms at 3 000, growing with the table;
 * with this pass every few hundred writes, 3.4 and 2.1 ms at 3 000. Every minute, the tables
 * grown by a fifth since they were last done get VACUUM (ANALYZE)
 * (DatabaseEngine.vacuumGrownTables); while it runs, PGlite answers nothing else (a table of a
 * hundred thousand tasks takes about a second). Nothing to do on PostgreSQL: its autovacuum.
 */
@Injectable()
export class EmbeddedMaintenance implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger(EmbeddedMaintenance.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly prisma: PrismaService) {}

  onApplicationBootstrap(): void {
    if (this.prisma.engine.kind !== 'pglite') return;
    const pass = () => {
      this.running = this.run().catch((error: Error) => this.logger.warn(`Vacuuming the embedded database failed: ${error.message}`));
    };
    this.timer = setInterval(pass, EVERY_MS).unref();
    pass();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** The database closes after this: a pass under way finishes first. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass: VACUUM (ANALYZE) of the tables grown since they were last done; answers them. */
  async run(): Promise<string[]> {
    const started = Date.now();
    const tables = await this.prisma.engine.vacuumGrownTables();
    if (tables.length > 0) this.logger.debug(`VACUUM (ANALYZE) ${tables.join(', ')} in ${Date.now() - started} ms`);
    return tables;
  }
}
