import { ALL_PERMISSIONS } from '../auth/permissions';
import { generateApiKey } from '../auth/api-keys';
import type { PrismaService } from './prisma.service';

/**
 * On a new embedded database: a demo project with two members, a few labels and a key
 * holding every permission, printed once so that a newcomer can try the API at once.
 */
export async function seedDemoProject(prisma: PrismaService, port: number): Promise<void> {
  const key = generateApiKey();
  await prisma.project.create({
    data: {
      name: 'Demo project',
      memberships: { create: [{ name: 'Ada Lovelace' }, { name: 'Grace Hopper' }] },
      labels: {
        create: [
          { name: 'bug', color: '#d73a4a' },
          { name: 'feature', color: '#0e8a16' },
          { name: 'docs', color: '#0075ca' },
        ],
      },
      apiKeys: { create: { name: 'Demo key', prefix: key.prefix, secretHash: key.secretHash, permissions: [...ALL_PERMISSIONS] } },
    },
  });
  // Printed, not logged: it is shown this once and stored only as a hash.
  process.stdout.write(
    [
      '',
      'A demo project was created on this new embedded database. Its API key (shown once):',
      '',
      `    ${key.secret}`,
      '',
      `Try it: curl -H "Authorization: Bearer ${key.secret}" http://localhost:${port}/api/v1/tasks`,
      `or in the Swagger UI at http://localhost:${port}/docs (Authorize, then paste the key).`,
      '',
    ].join('\n') + '\n',
  );
}
