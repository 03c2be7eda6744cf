import { defineConfig } from 'vitest/config';

// `npm run test:node`: the booted test node (test/node/), a qemu guest the tests boot and power off.
// Kept out of `npm test`: it needs the .deb (npm run package) and takes a core for minutes.
export default defineConfig({
  test: {
    include: ['test/node/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 1_200_000,
    hookTimeout: 1_800_000,
    reporters: ['default'],
  },
});
