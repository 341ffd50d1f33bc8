// `npm run db:migrate`: applies pending migrations to the configured database and exits.
import { loadConfig } from '../config/app-config';
import { openDatabase } from './database-engine';
import { applyMigrations } from './migrator';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const engine = await openDatabase(config);
  try {
    const result = await engine.withSession((session) => applyMigrations(session));
    console.log(result.applied.length ? `Applied: ${result.applied.join(', ')}` : 'No pending migrations');
  } finally {
    await engine.close();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
