import { PrismaService } from '../src/database/prisma.service';
import { RetryTransaction } from '../src/database/sql';
import { Prisma } from '../src/generated/prisma/client';
import { counter } from './support/races';
import { engine, useTestApp } from './support/test-app';

// What PrismaService.write promises every service, on both engines: a write's last statements
// (SqlTransaction.finish) go out together with its COMMIT, and stand or fall with the write.
// Services rely on it through ChangeLog.record and the Idempotency-Key's stored answer.
describe('write transactions', () => {
  const t = useTestApp();
  beforeAll(async () => {
    await t.prisma.$executeRawUnsafe('CREATE TABLE write_test (id int PRIMARY KEY)');
  });
  beforeEach(() => t.prisma.$executeRawUnsafe('DELETE FROM write_test'));

  const stored = async () => (await t.prisma.$queryRaw<{ id: number }[]>`SELECT id FROM write_test ORDER BY id`).map((row) => row.id);
  const insert = (id: number) => Prisma.sql`INSERT INTO write_test VALUES (${id})`;

  it('commits the write with its last statements, each seeing what the ones before it wrote, and answers their rows in order', async () => {
    const answers = await t.prisma.write(async (tx) => {
      await tx.$executeRaw(insert(1));
      return tx.finish(insert(2), Prisma.sql`SELECT count(*)::int AS n FROM write_test`);
    });
    expect(answers).toEqual([[], [{ n: 2 }]]);
    expect(await stored()).toEqual([1, 2]);
  });

  it('rolls the whole write back when one of its last statements fails, with that statement’s error', async () => {
    const write = t.prisma.write(async (tx) => {
      await tx.$executeRaw(insert(1));
      await tx.finish(insert(2), insert(2), insert(3));
    });
    await expect(write).rejects.toMatchObject({ code: '23505' });
    expect(await stored()).toEqual([]);
  });

  it('fails a write whose last statements failed even when its work caught that failure: nothing of it committed', async () => {
    const write = t.prisma.write(async (tx) => {
      await tx.$executeRaw(insert(1));
      await tx.finish(insert(2), insert(2)).catch(() => undefined);
      return 'the work went on as if it had committed';
    });
    await expect(write).rejects.toThrow();
    expect(await stored()).toEqual([]);
  });

  // BEGIN goes out with a write's first statements (database-engine.ts): they are inside the transaction.
  it('runs a write whose first statements are its last ones as one transaction: one failing leaves nothing', async () => {
    const write = t.prisma.write((tx) => tx.finish(insert(1), insert(2), insert(1)));
    await expect(write).rejects.toMatchObject({ code: '23505' });
    expect(await stored()).toEqual([]);
  });

  it('runs a write’s first statement inside its transaction, on generic plans', async () => {
    type Xid = { xid: string | null; mode?: string };
    const [[first], [second]] = await t.prisma.write(async (tx) => [
      await tx.$queryRaw<Xid[]>`SELECT pg_current_xact_id()::text AS xid, current_setting('plan_cache_mode') AS mode`,
      // Outside a transaction block this would be a transaction of its own, with no id yet.
      await tx.$queryRaw<Xid[]>`SELECT pg_current_xact_id_if_assigned()::text AS xid`,
    ]);
    expect(second.xid).toBe(first.xid);
    expect(first.mode).toBe('force_generic_plan');
  });

  it('answers a write that sends no statement, and one that throws before sending any, and goes on serving writes', async () => {
    await expect(t.prisma.write(() => Promise.resolve('nothing to write'))).resolves.toBe('nothing to write');
    await expect(t.prisma.write(() => Promise.reject(new Error('refused before any statement')))).rejects.toThrow('refused before any statement');
    // More writes than the pool has connections, each committed on its own.
    for (let id = 1; id <= 12; id++) await t.prisma.write((tx) => tx.finish(insert(id)));
    expect(await stored()).toHaveLength(12);
  });

  it('runs no statement after the last ones: it fails, and what the write did stays committed', async () => {
    const write = t.prisma.write(async (tx) => {
      await tx.finish(insert(1));
      await tx.$executeRaw(insert(2));
    });
    await expect(write).rejects.toThrow('This transaction has committed: no statement can follow its last ones');
    expect(await stored()).toEqual([1]);
  });

  it('leaves the COMMIT of a write that joined a transaction to that transaction: both commit, or neither', async () => {
    const joined = (then: () => Promise<void>) =>
      t.prisma.write((outer) =>
        PrismaService.withinTransaction(outer, async () => {
          await t.prisma.write((inner) => inner.finish(insert(1)));
          await then();
          await outer.finish(insert(2));
        }),
      );
    await expect(
      joined(async () => {
        throw new Error('the outer transaction fails after the joined write');
      }),
    ).rejects.toThrow('the outer transaction fails');
    expect(await stored()).toEqual([]);
    await joined(async () => undefined);
    expect(await stored()).toEqual([1, 2]);
  });

  describe('retries (docs/locking.md)', () => {
    let baseUrl: string;
    beforeAll(async () => {
      await t.app.listen(0, '127.0.0.1');
      baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as { port: number }).port}`;
    });
    const retries = (reason: string) => counter(baseUrl, 'db_write_retries_total', { reason });

    it('runs a write that asks for it (RetryTransaction) again in a new transaction, counted in /metrics; the failed attempt leaves nothing', async () => {
      const before = await retries('locks_moved');
      let attempts = 0;
      const answer = await t.prisma.write(async (tx) => {
        await tx.$executeRaw(insert(++attempts));
        if (attempts === 1) throw new RetryTransaction('the test asks for it');
        return 'done';
      });
      expect([answer, attempts]).toEqual(['done', 2]);
      expect(await stored()).toEqual([2]);
      expect((await retries('locks_moved')) - before).toBe(1);
    });

    it('gives up after four attempts, with the last attempt’s error', async () => {
      let attempts = 0;
      const write = t.prisma.write(async () => {
        attempts++;
        throw new RetryTransaction(`attempt ${attempts}`);
      });
      await expect(write).rejects.toThrow('attempt 4');
      expect(attempts).toBe(4);
    });

    it('does not run again a write that failed for another reason', async () => {
      let attempts = 0;
      const write = t.prisma.write(async (tx) => {
        attempts++;
        await tx.finish(insert(1), insert(1));
      });
      await expect(write).rejects.toMatchObject({ code: '23505' });
      expect(attempts).toBe(1);
    });

    (engine === 'postgresql' ? it : it.skip)(
      'runs a deadlocked write again instead of failing it: both writes commit (PostgreSQL; PGlite runs one transaction at a time)',
      async () => {
        await t.prisma.$executeRawUnsafe('INSERT INTO write_test VALUES (1), (2)');
        const before = await retries('deadlock');
        // Two writes that lock rows 1 and 2 in opposite orders, each waiting until the other holds its first row.
        const holding: (() => void)[] = [];
        const both = new Promise<void>((resolve) => holding.push(resolve));
        let held = 0;
        const write = (first: number, second: number) =>
          t.prisma.write(async (tx) => {
            await tx.$queryRaw`SELECT id FROM write_test WHERE id = ${first} FOR UPDATE`;
            if (++held === 2) holding[0]();
            await Promise.race([both, new Promise((resolve) => setTimeout(resolve, 2000))]);
            await tx.$queryRaw`SELECT id FROM write_test WHERE id = ${second} FOR UPDATE`;
            return tx.finish(Prisma.sql`UPDATE write_test SET id = id WHERE id = ${second}`);
          });
        await expect(Promise.all([write(1, 2), write(2, 1)])).resolves.toHaveLength(2);
        expect((await retries('deadlock')) - before).toBeGreaterThanOrEqual(1);
      },
    );
  });

  it('sends statements together without committing (pipeline), the transaction going on after them', async () => {
    const write = t.prisma.write(async (tx) => {
      const [, [row]] = await tx.pipeline<[unknown[], { n: number }[]]>(insert(1), Prisma.sql`SELECT count(*)::int AS n FROM write_test`);
      expect(row.n).toBe(1);
      await tx.$executeRaw(insert(2));
      throw new Error('rolled back after the pipeline');
    });
    await expect(write).rejects.toThrow('rolled back after the pipeline');
    expect(await stored()).toEqual([]);
  });
});
