import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { withKey } from './support/fixtures';
import { engine, startTestApp } from './support/test-app';

// The demo project belongs to the embedded database only (decisions.md section 9).
(engine === 'pglite' ? describe : describe.skip)('demo project on a new embedded database', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'demo-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('prints a key with every permission once, and keeps the data across restarts', async () => {
    const printed: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (printed.push(String(chunk)), true));
    try {
      const first = await startTestApp({ dataDir, seedDemoProject: true });
      const key = /(tsk_[A-Za-z0-9_-]{43})/.exec(printed.join(''))?.[1];
      expect(key).toBeDefined();
      const api = withKey(first, key!);
      await api.get('/api/v1/members').expect(200);
      const row = await first.prisma.apiKey.findFirstOrThrow({ where: { prefix: key!.slice(0, 12) } });
      expect([...row.permissions].sort()).toEqual(['sprints:manage', 'tasks:create', 'tasks:delete', 'tasks:edit', 'webhooks:manage']);
      await first.close();

      printed.length = 0;
      const second = await startTestApp({ dataDir, seedDemoProject: true });
      try {
        expect(printed.join('')).not.toMatch(/tsk_/);
        await withKey(second, key!).get('/api/v1/members').expect(200);
        expect(await second.prisma.project.count()).toBe(1);
      } finally {
        await second.close();
      }
    } finally {
      write.mockRestore();
    }
  });
});
