// npm run bench's idle figure alone, quicker: a private containerd, 30 pods, then the agent's RSS
// split after a settle (IDLE_MEMORY_SETTLE_S, 60). IDLE_MEMORY_CMD='["node","--flag","bundle.cjs"]'
// runs another command line than build/bootlet (e.g. the bundle under plain node, to take a heap
// snapshot); IDLE_MEMORY_HOLD_S keeps it running afterwards for a look from outside.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { startContainerd } from '../dev/containerd.js';
import { importTestImages } from '../dev/images.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';
import { agentArgs, BOOTLET_EXE } from '../test/support/agent.js';
import { benchPodManifest, writeAtomically } from './pods.js';
import { benchAgentOptions, makeBenchDirs } from './bench-node.js';
import { formatRssParts, rssParts } from './smaps.js';
import { cpuSeconds, rssMiB } from './proc.js';
import { waitFor } from '../test/support/wait.js';

const PODS = Number(process.env.IDLE_MEMORY_PODS ?? 30);
const SETTLE_S = Number(process.env.IDLE_MEMORY_SETTLE_S ?? 60);
const HOLD_S = Number(process.env.IDLE_MEMORY_HOLD_S ?? 0);
const read = (p: string): string => fs.readFileSync(p, 'utf8');

async function main(): Promise<void> {
  const dir = makeTmpDir('idle-memory');
  const cd = await startContainerd({ name: 'idlemem' });
  try {
    await importTestImages(cd);
    const dirs = makeBenchDirs(dir);
    const { manifests } = dirs;
    const cmd = process.env.IDLE_MEMORY_CMD ? (JSON.parse(process.env.IDLE_MEMORY_CMD) as string[]) : [BOOTLET_EXE];
    const args = [
      ...agentArgs(benchAgentOptions(cd.endpoint, dirs)),
      ...(process.env.IDLE_MEMORY_ARGS ? (JSON.parse(process.env.IDLE_MEMORY_ARGS) as string[]) : []),
    ];
    const proc = spawn(cmd[0]!, [...cmd.slice(1), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    proc.stdout.on('data', (c: Buffer) => (log += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (log += c.toString()));
    const pid = proc.pid!;
    const exePath = fs.readlinkSync(`/proc/${pid}/exe`);
    console.log(`agent pid ${pid} (${exePath})`);
    for (let i = 0; i < PODS; i++) writeAtomically(manifests, `idle-${i}.yaml`, benchPodManifest(`idle-${i}`));
    const started = (): number =>
      new Set([...log.matchAll(/"msg":"Started container"[^\n]*"pod":"default\/(idle-\d+)/g)].map((m) => m[1])).size;
    await waitFor(() => started() >= PODS, { timeoutMs: 300_000, intervalMs: 500, what: `${PODS} pods started` });
    const busy = rssParts(pid, exePath, read);
    console.log(`all ${PODS} started (agent CPU ${cpuSeconds(pid, read).toFixed(2)} s): ${formatRssParts(busy)}`);
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    console.log(
      `idle after ${SETTLE_S}s: VmRSS ${rssMiB(pid, read).toFixed(1)} MiB; threads ${fs.readdirSync(`/proc/${pid}/task`).length}; agent CPU ${cpuSeconds(pid, read).toFixed(2)} s`,
    );
    console.log(`  ${formatRssParts(rssParts(pid, exePath, read))}`);
    if (HOLD_S > 0) {
      console.log(`holding ${HOLD_S}s (pid ${pid})`);
      await new Promise((r) => setTimeout(r, HOLD_S * 1000));
    }
    // The agent goes first, so that it does not restart what cd.stop() removes.
    proc.kill('SIGTERM');
  } finally {
    await cd.stop();
    removeTmpDir(dir);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
