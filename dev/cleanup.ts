// `npx tsx dev/cleanup.ts`: removes private containerds (and their containers and mounts) and test-node
// guests (their qemu and overlay) that crashed or interrupted test runs left under .tmp/. Instances of
// live test runs and of `npm run up` are left alone. .ci/run calls it on exit.
import { cleanupStaleContainerds } from './containerd.js';
import { cleanupStaleGuests } from './guest/guest-node.js';

const cleaned = await cleanupStaleContainerds();
for (const dir of cleaned) console.log(`removed stale private containerd ${dir}`);
if (cleaned.length === 0) console.log('no stale private containerd');
const guests = await cleanupStaleGuests();
for (const dir of guests) console.log(`removed stale test-node guest ${dir}`);
