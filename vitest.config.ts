import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: run files in a few forks, not one per test.
    pool: 'forks',
    maxWorkers: 2,
  },
});
