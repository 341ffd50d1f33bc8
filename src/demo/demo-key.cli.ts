// `npm run demo:key`: issues a new key, with every permission, for the demo project of the embedded
// database in DATA_DIR, and prints it: how to get back into the demo when its key (printed once, at
// the first start) is lost. The embedded database belongs to one process at a time: while a server
// holds it, this refuses (exit 1) rather than print a key the server never sees. With ADMIN_TOKEN
// set, POST /admin/v1/projects/{projectId}/keys does the same while the server runs.
import { generateApiKey } from '../auth/api-keys';
import { ALL_PERMISSIONS } from '../auth/permissions';
import { loadConfig } from '../config/app-config';
import { openDatabase } from '../database/database-engine';
import { EmbeddedDatabaseHeld } from '../database/embedded-lock';
import { DEMO_KEY_NAME } from './demo-seed';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (config.databaseUrl !== null) throw new Error('The demo project lives on the embedded database only: unset DATABASE_URL');
  let engine;
  try {
    engine = await openDatabase(config);
  } catch (error) {
    if (!(error instanceof EmbeddedDatabaseHeld)) throw error;
    throw new Error(
      [
        `npm run demo:key: a server (pid ${error.holder.pid}, running since ${error.holder.since}) holds the embedded database in ${config.dataDir},`,
        'and a key written now would never reach it. Stop that server (Ctrl+C where it runs) and run npm run demo:key again;',
        'or, with ADMIN_TOKEN set on that server, issue a key while it runs: POST /admin/v1/projects/{projectId}/keys.',
      ].join('\n'),
    );
  }
  try {
    const key = generateApiKey();
    const issued = await engine.withSession(async (session) => {
      // The demo project: the project whose first key is the demo key (the seed made both at once).
      const [demo] = await session.query<{ id: string; name: string }>(
        `SELECT p.id, p.name FROM projects p JOIN api_keys k ON k.project_id = p.id
          WHERE k.name = $1 ORDER BY p.created_at LIMIT 1`,
        [DEMO_KEY_NAME],
      );
      if (!demo) return null;
      await session.query(`INSERT INTO api_keys (project_id, name, prefix, secret_hash, permissions) VALUES ($1, $2, $3, $4, $5)`, [
        demo.id,
        DEMO_KEY_NAME,
        key.prefix,
        key.secretHash,
        [...ALL_PERMISSIONS],
      ]);
      return demo;
    });
    if (!issued) throw new Error(`No demo project in ${config.dataDir}: it is created on a new embedded database only`);
    console.log(`A new key for "${issued.name}" (${issued.id}), with every permission (shown once):\n\n    ${key.secret}\n`);
  } finally {
    await engine.close();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
