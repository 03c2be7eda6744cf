// Where one pod start's time goes, call by call: bootlet's log lines against containerd's own
// (info level logs each CRI call's receipt and return, stamped in ns), for the same pods started by
// bootlet and by the bare three calls, one at a time. Not a gate; a tool: `tsx bench/start-trace.ts`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startAgent } from '../test/support/agent.js';
import { waitFor } from '../test/support/wait.js';
import { listRuntimePods } from '../src/kuberuntime/runtime-pods.js';
import { bareStartPod, benchPodManifest, BENCH_NODE, rawStopPod, writeAtomically } from './pods.js';
import { percentile } from './report.js';
import { benchAgentOptions, startBenchNode } from './bench-node.js';
import { containerdEvents, marks } from './containerd-log.js';

const RUNS = Number(process.env.TRACE_RUNS ?? 10);

async function main(): Promise<void> {
  const node = await startBenchNode('start-trace');
  const { cd, cri, podLogsDir, rootDir, manifests } = node;
  const logPath = path.join(cd.dir, 'containerd.log');
  try {
    const rawCtx = { runtime: cri.runtime, images: cri.images, podLogsDir, rootDir };
    const agent = startAgent({
      ...benchAgentOptions(cd.endpoint, node),
      ...(process.env.TRACE_STRACE
        ? {
            wrap: [
              'strace',
              '-f',
              '-ttt',
              '-s',
              '96',
              '-e',
              'trace=mkdir,mkdirat,openat,write,writev,sendmsg,sendto,connect,rename,symlink,symlinkat,inotify_add_watch',
              '-o',
              process.env.TRACE_STRACE,
            ],
          }
        : {}),
    });
    await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'agent ready', 30_000);
    const gone = (prefix: string) =>
      waitFor(async () => [...(await listRuntimePods(cri.runtime)).values()].every((p) => !p.name.startsWith(prefix)), {
        timeoutMs: 60_000,
        what: `${prefix} removed`,
      });
    const boot: { name: string; written: number }[] = [];
    const bare: { name: string; t0: number; end: number }[] = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const bareName = `tbare${i}-${BENCH_NODE}`;
      const t0 = Date.now();
      const p = await bareStartPod(cri.runtime, bareName);
      bare.push({ name: bareName, t0, end: Date.now() });
      await rawStopPod(rawCtx, p);
      const name = `tboot${i}`;
      const written = Date.now();
      writeAtomically(manifests, `${name}.yaml`, benchPodManifest(name));
      await agent.waitForLog(
        (r) => r.msg === 'Started container' && r.pod === `default/${name}-${BENCH_NODE}`,
        `${name} started`,
        60_000,
      );
      boot.push({ name, written });
      fs.rmSync(path.join(manifests, `${name}.yaml`));
      await gone(name);
    }
    await new Promise((r) => setTimeout(r, 500));
    const events = containerdEvents(logPath);
    const rec = agent.records();
    const logAt = (msg: string, pod: string) =>
      Number(rec.find((r) => r.msg === msg && r.pod === pod)?.ts ?? NaN) * 1000;
    const rows: Record<string, number[]> = {};
    const add = (k: string, v: number) => (rows[k] ??= []).push(v);
    // The first of each is a warm-up.
    for (const b of bare.slice(1)) {
      const m = marks(events, b.name);
      add('bare: call → RunPodSandbox received', m.runSandbox! - b.t0);
      add('bare: RunPodSandbox in containerd', m.sandboxReturned! - m.runSandbox!);
      add('bare: sandbox returned → CreateContainer received', m.createContainer! - m.sandboxReturned!);
      add('bare: CreateContainer in containerd', m.containerCreated! - m.createContainer!);
      add('bare: created → StartContainer received', m.startContainer! - m.containerCreated!);
      add('bare: StartContainer in containerd', m.started! - m.startContainer!);
      add('bare: total to StartContainer returned', m.started! - b.t0);
    }
    for (const b of boot.slice(1)) {
      const pod = `default/${b.name}-${BENCH_NODE}`;
      const m = marks(events, `${b.name}-${BENCH_NODE}`);
      add('boot: rename → accepted (agent log)', logAt('Static pod manifest accepted', pod) - b.written);
      add('boot: accepted → RunPodSandbox received', m.runSandbox! - logAt('Static pod manifest accepted', pod));
      add('boot: RunPodSandbox in containerd', m.sandboxReturned! - m.runSandbox!);
      add('boot: sandbox returned → "Created pod sandbox" log', logAt('Created pod sandbox', pod) - m.sandboxReturned!);
      add('boot: sandbox returned → CreateContainer received', m.createContainer! - m.sandboxReturned!);
      add('boot: CreateContainer in containerd', m.containerCreated! - m.createContainer!);
      add('boot: created → StartContainer received', m.startContainer! - m.containerCreated!);
      add('boot: StartContainer in containerd', m.started! - m.startContainer!);
      add('boot: StartContainer returned → "Started container" log', logAt('Started container', pod) - m.started!);
      add('boot: total rename → StartContainer returned', m.started! - b.written);
    }
    for (const [k, v] of Object.entries(rows))
      console.log(
        `${k.padEnd(58)} p50 ${percentile(v, 50).toFixed(1).padStart(6)}  min ${Math.min(...v)
          .toFixed(1)
          .padStart(6)}  max ${Math.max(...v)
          .toFixed(1)
          .padStart(6)}`,
      );
    await agent.kill('SIGTERM');
  } finally {
    await node.close();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
