import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The booted test node has a command of its own (npm run test:node, vitest.node.config.ts).
    exclude: [...configDefaults.exclude, 'test/node/**'],
    // e2e files share one private containerd per file; keep files apart so they do not fight over CPU.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
    reporters: ['default'],
  },
});
