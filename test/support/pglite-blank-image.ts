import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Set up before each file of the PGlite project (jest.config.js): a new PGlite database, in
 * memory or in an empty directory, which would run initdb (most of its start), loads instead the
 * blank data directory that initdb wrote once for the run (pglite-global-setup.js). The database
 * is the same: initdb's, with every migration still to apply.
 */
const imageFile = process.env.TEST_PGLITE_BLANK_IMAGE;
if (imageFile) {
  let image: Blob | undefined;
  const create = PGlite.create.bind(PGlite) as (options: PGliteOptions) => Promise<PGlite>;
  (PGlite as unknown as { create: (dataDirOrOptions?: string | PGliteOptions, options?: PGliteOptions) => Promise<PGlite> }).create = (
    dataDirOrOptions,
    options,
  ) => {
    const resolved: PGliteOptions =
      typeof dataDirOrOptions === 'string' ? { dataDir: dataDirOrOptions, ...options } : (dataDirOrOptions ?? options ?? {});
    if (resolved.loadDataDir || !isNewDatabase(resolved.dataDir)) return create(resolved);
    image ??= new Blob([readFileSync(imageFile)]);
    return create({ ...resolved, loadDataDir: image });
  };
}

/** In memory (no data directory, or `memory://`), or a directory initdb has not written yet. */
function isNewDatabase(dataDir: string | undefined): boolean {
  if (!dataDir || dataDir.startsWith('memory://')) return true;
  if (/^[a-z]+:\/\//.test(dataDir)) return false;
  return !existsSync(path.join(dataDir, 'PG_VERSION'));
}
