// `npx tsx dev/guest/run.ts 'systemd-analyze blame | head'`: boots the test node's guest (building
// its image first if the package list changed), runs a bash script in it, prints what it printed,
// and removes the guest (KEEP=1 leaves it running until the process ends; BOOTLET_KEEP_GUEST=1 keeps
// its directory: overlay, console logs).
import { startGuestNode } from './guest-node.js';

const t0 = Date.now();
const g = await startGuestNode({ name: 'run', log: console.log });
try {
  process.stdout.write(await g.sh(process.argv[2] ?? 'systemd-analyze', { timeoutMs: 600_000 }));
} finally {
  if (!process.env.KEEP) await g.stop();
}
console.log(`(${((Date.now() - t0) / 1000).toFixed(1)} s)`);
