import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { PrismaService } from './prisma.service';

/** How often the embedded database's tables are looked at. */
const EVERY_MS = 10_000;
/**
 * How long one pass may hold the database before it leaves the rest to the next: past it, no
 * further statement starts. A pass always runs one, and a statement runs to its end: at 200 000
 * tasks, ANALYZE of the tasks table takes about 0.2 s here, its VACUUM 0.4 s.
 */
const PASS_BUDGET_MS = 50;

/**
 * The embedded database's autovacuum. PGlite runs none, so without this its tables are never
 * vacuumed nor analyzed: dead rows pile up, and the planner never learns their size. Measured
 * on PGlite, the service's create and update in a loop: with the tasks table never analyzed,
 * 3.5 and 4.5 ms of CPU each at 1 500 tasks and 5.6 and 8.7 ms at 3 000, growing with the table;
 * with this pass every few hundred writes, 3.4 and 2.1 ms at 3 000.
 *
 * While a statement of it runs PGlite answers nothing else, so a pass is kept short: every 10 s,
 * the tables past autovacuum's thresholds (DatabaseEngine.maintainTables), the most overdue
 * first, until PASS_BUDGET_MS is spent. Doing every table due in one pass, once a minute, held
 * the database for 1.7 s in a write-heavy bench. Nothing to do on PostgreSQL: its autovacuum.
 */
@Injectable()
export class EmbeddedMaintenance implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(EmbeddedMaintenance.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  /** A pass longer than EVERY_MS (a large table's VACUUM) is not joined by the next. */
  private busy = false;

  constructor(private readonly prisma: PrismaService) {}

  onApplicationBootstrap(): void {
    if (this.prisma.engine.kind !== 'pglite') return;
    const pass = () => {
      if (this.busy) return;
      this.busy = true;
      this.running = this.run()
        .catch((error: Error) => this.logger.warn(`Vacuuming the embedded database failed: ${error.message}`))
        .finally(() => (this.busy = false));
    };
    this.timer = setInterval(pass, EVERY_MS).unref();
    pass();
  }

  /** The timer stops, and a pass under way finishes: the database closes after this. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass; answers the statements it ran. */
  async run(budgetMs = PASS_BUDGET_MS): Promise<string[]> {
    const started = Date.now();
    const statements = await this.prisma.engine.maintainTables(budgetMs);
    if (statements.length > 0) this.logger.debug(`${statements.join('; ')} in ${Date.now() - started} ms`);
    return statements;
  }
}
