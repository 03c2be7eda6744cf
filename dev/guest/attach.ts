// `npx tsx dev/guest/attach.ts .tmp/guest-<name>-<id> 'journalctl -b -1 -u kubelet'`: runs a bash script
// in a guest that is still up (a test run killed before its clean-up, or KEEP=1 of run.ts) through its
// agent socket, and prints what it printed. The next startGuestNode removes a guest whose owner is gone.
import * as path from 'node:path';
import { GuestAgentClient } from './guest-agent-client.js';

const [dir, script] = process.argv.slice(2);
if (!dir || !script) {
  console.error("usage: npx tsx dev/guest/attach.ts <guest dir> '<bash script>'");
  process.exit(2);
}
const agent = await GuestAgentClient.connect(path.resolve(dir, 'agent.sock'));
const r = await agent.exec(['bash', '-c', script], { timeoutMs: 600_000 });
process.stdout.write(r.stdout);
process.stderr.write(r.stderr);
agent.close();
process.exitCode = r.code ?? 1;
