// End-to-end tests through HTTP, run twice: on embedded PGlite and on real PostgreSQL; and the
// few unit tests (test/*.spec.ts) once.
// `npm test` runs both projects; each test file starts its own app on its own database.
const transform = {
  '^.+\\.ts$': [
    'ts-jest',
    {
      tsconfig: 'tsconfig.json',
      // The Swagger CLI plugin, as `nest build` runs it, so the tests see the same OpenAPI document.
      astTransformers: {
        before: [
          {
            path: '<rootDir>/test/support/swagger-plugin.js',
            options: { classValidatorShim: true, introspectComments: true, dtoFileNameSuffix: ['.dto.ts'] },
          },
        ],
      },
      diagnostics: false,
    },
  ],
};

const common = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: {},
  transform,
};

module.exports = {
  testTimeout: 60_000,
  // Once for the whole run: builds dist/ for the tests that start the service as a process.
  globalSetup: '<rootDir>/test/support/build-global-setup.js',
  maxWorkers: 2,
  // The slowest files first, even on a fresh clone, which has no timings of an earlier run.
  testSequencer: '<rootDir>/test/support/test-sequencer.js',
  // The default output, then the count of answers checked against the OpenAPI document.
  reporters: ['default', '<rootDir>/test/support/openapi-contract-reporter.js'],
  projects: [
    // Rules with a clock or input no HTTP test can reach, once (no database).
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'pglite',
      globals: { TEST_DATABASE_ENGINE: 'pglite' },
      // initdb once for the run, not once per app (docs/testing.md, "Run time").
      globalSetup: '<rootDir>/test/support/pglite-global-setup.js',
      globalTeardown: '<rootDir>/test/support/pglite-global-teardown.js',
      setupFiles: ['<rootDir>/test/support/pglite-blank-image.ts'],
    },
    {
      ...common,
      displayName: 'postgresql',
      globals: { TEST_DATABASE_ENGINE: 'postgresql' },
      globalSetup: '<rootDir>/test/support/postgres-global-setup.js',
      globalTeardown: '<rootDir>/test/support/postgres-global-teardown.js',
    },
  ],
};
