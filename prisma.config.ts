// Configuration of the Prisma CLI (generate, migrate dev, migrate diff).
// The CLI runs on its WASM engines ("js") against an embedded PGlite, so it needs no
// native engine download. The running service does not read this file: it applies
// migrations with its own migrator (src/database/migrator.ts) on both engines.
import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PGLITE_EXTENSIONS } from './src/database/pglite-extensions';

// The database the CLI works on: PRISMA_PGLITE_DIR, or a scratch in-memory one.
const dataDir = process.env.PRISMA_PGLITE_DIR ?? 'memory://prisma-cli';

// The adapter's own shadow database lacks the extensions the migrations create.
class PGliteWithExtensions extends PrismaPGlite {
  override connectToShadowDb() {
    return new PrismaPGlite(new PGlite({ dataDir: 'memory://shadow', extensions: PGLITE_EXTENSIONS })).connect();
  }
}

export default defineConfig({
  experimental: { adapter: true },
  schema: path.join('prisma', 'schema.prisma'),
  engine: 'js',
  adapter: async () => new PGliteWithExtensions(new PGlite({ dataDir, extensions: PGLITE_EXTENSIONS })),
});
