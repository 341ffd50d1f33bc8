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
 * The embedded database's autovacuum: PGlite runs none, and a never-analyzed table made writes
 * slower as it grew. Short passes (PASS_BUDGET_MS, every 10 s), since PGlite answers nothing else
 * while one runs. Nothing to do on PostgreSQL.
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
