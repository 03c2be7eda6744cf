// The API side under load: how long after the API server becomes reachable every mirror pod and
// status of 50 static pods is correct, and whether the agent's memory grows while the server is
// away and statuses keep changing (it must not: one entry per object, not one per change).
//   npx tsx bench/apiserver.ts (a full GC is run before each memory sample)
// The heap grows a little at first (the bounded event buffer fills: at most 1000 events, fewer
// after the per-object spam filter); from half-way on it must stay flat.
import { mkdtempSync, rmSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Pod } from 'kubernetes-types/core/v1';
import { startApiAgent, type ApiAgent } from '../src/apiserver/api-agent.js';
import { nullLogger } from '../src/log/logger.js';
import { startFakeApiServer, type FakeApiServer } from '../test/support/fake-apiserver/index.js';
import { waitFor } from '../test/support/wait.js';
import { FakeStaticPods, FakeStatuses, fakeNodeInfo, runningStatus, staticPod } from '../test/e2e/apiserver/fakes.js';
import { percentile } from './report.js';

const NODE = 'bench-node';
const PODS = Number(process.env.BENCH_API_PODS ?? 50);
const RUNS = Number(process.env.BENCH_API_RUNS ?? 5);
/** 10 minutes of one status change per second for 50 pods, compressed: 6000 changes. */
const AWAY_CHANGES = Number(process.env.BENCH_API_AWAY_CHANGES ?? 6000);

export interface ApiServerBenchResult {
  pods: number;
  convergeMs: number[];
  convergeP50Ms: number;
  /** From the agent's first answer from the server to converged: the work, without the probe's wait. */
  afterContactP50Ms: number;
  /** before the outage's changes, half-way through them, after all of them. */
  memory: { before: MemorySample; mid: MemorySample; after: MemorySample; changes: number; gc: boolean };
}

interface MemorySample {
  heapUsedMiB: number;
  rssMiB: number;
}

/** A full collection before each sample, so the numbers say what is kept, not what is not yet collected. */
function collector(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as unknown;
  return typeof gc === 'function' ? (gc as () => void) : undefined;
}

function sample(): MemorySample {
  const g = collector();
  if (g) {
    g();
    g();
  }
  const m = process.memoryUsage();
  return { heapUsedMiB: m.heapUsed / 2 ** 20, rssMiB: m.rss / 2 ** 20 };
}

function converged(api: FakeApiServer, pods: FakeStaticPods, restarts: number): boolean {
  return pods.list().every((sp) => {
    const m = api.object('pods', sp.pod.metadata.namespace, sp.pod.metadata.name) as unknown as Pod | undefined;
    return m?.metadata?.annotations?.['kubernetes.io/config.mirror'] === sp.uid && m.status?.containerStatuses?.[0]?.restartCount === restarts;
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runApiServerBench(): Promise<ApiServerBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-apiserver-'));
  const api = await startFakeApiServer();
  const kubeconfig = api.writeKubeconfig(join(dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  const pods = new FakeStaticPods(Array.from({ length: PODS }, (_, i) => staticPod(`bench-${i}`, NODE)));
  const statuses = new FakeStatuses();
  for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp));
  const start = (): ApiAgent => startApiAgent({ kubeconfigPath: kubeconfig, nodeInfo: fakeNodeInfo(NODE), staticPods: pods, statuses, logger: nullLogger });
  let agent: ApiAgent | undefined;
  try {
    // Time to converge: a fresh cluster (wiped store) appearing under an agent that waits for it.
    const convergeMs: number[] = [];
    const afterContactMs: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      await api.stop();
      api.wipe();
      agent = start();
      await sleep(1500); // the agent has found the server absent and is probing
      const t0 = performance.now();
      await api.start();
      let upAt: number | undefined;
      await waitFor(
        () => {
          if (upAt === undefined && agent!.state().connected) upAt = performance.now();
          return converged(api, pods, 0);
        },
        { timeoutMs: 60_000, intervalMs: 5, what: `${PODS} mirror pods with status` },
      );
      const end = performance.now();
      convergeMs.push(end - t0);
      afterContactMs.push(end - (upAt ?? t0));
      if (process.env.BENCH_DEBUG) console.log(`run ${run}: up after ${((upAt ?? t0) - t0).toFixed(0)} ms, converged ${(end - t0).toFixed(0)} ms`);
      if (run < RUNS - 1) {
        await agent.stop();
        agent = undefined;
      }
    }

    // Memory while away: steady state, then the server goes, statuses change AWAY_CHANGES times.
    await sleep(1000);
    await api.stop();
    await waitFor(() => !agent!.state().connected, { timeoutMs: 30_000, what: 'the agent to see the server gone' });
    await sleep(500);
    const before = sample();
    let restarts = 0;
    let mid = before;
    for (let i = 0; i < AWAY_CHANGES; i++) {
      if (i === AWAY_CHANGES / 2) {
        await sleep(500);
        mid = sample();
      }
      const sp = pods.list()[i % PODS];
      if (i % PODS === 0) restarts++;
      statuses.set(sp.uid, runningStatus(sp, restarts));
      agent!.recorder.event({ kind: 'Pod', namespace: sp.pod.metadata.namespace, name: sp.pod.metadata.name, uid: sp.uid }, 'Warning', 'BackOff', `Back-off restarting failed container (restart ${restarts})`);
      if (i % 100 === 99) await sleep(10); // let probes and timers run, as they would over 10 minutes
    }
    await sleep(500);
    const after = sample();
    // And it all lands when the server is back.
    await api.start();
    await waitFor(() => converged(api, pods, restarts), { timeoutMs: 60_000, intervalMs: 5, what: 'the latest statuses after the outage' });
    return { pods: PODS, convergeMs, convergeP50Ms: percentile(convergeMs, 50), afterContactP50Ms: percentile(afterContactMs, 50), memory: { before, mid, after, changes: AWAY_CHANGES, gc: collector() !== undefined } };
  } finally {
    await agent?.stop();
    await api.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printApiServerBench(r: ApiServerBenchResult): void {
  const f = (n: number): string => n.toFixed(1);
  console.log(`API server reachable → ${r.pods} mirror pods + statuses correct: p50 ${f(r.convergeP50Ms)} ms (runs: ${r.convergeMs.map(f).join(', ')}; target ≤ 2000); of which after the first answer: p50 ${f(r.afterContactP50Ms)} ms`);
  const m = r.memory;
  console.log(
    `memory while away (${m.changes} status changes + events, ${m.gc ? 'after GC' : 'no --expose-gc'}): heapUsed ${f(m.before.heapUsedMiB)} → ${f(m.mid.heapUsedMiB)} (half-way) → ${f(m.after.heapUsedMiB)} MiB, RSS ${f(m.before.rssMiB)} → ${f(m.mid.rssMiB)} → ${f(m.after.rssMiB)} MiB`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runApiServerBench()
    .then((r) => {
      printApiServerBench(r);
      process.exit(0);
    })
    .catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
}
