// The API side under load: how long after the API server becomes reachable the Node, its Lease,
// and every mirror pod of 50 static pods with its status are right, and whether the agent's memory
// grows while the server is away and statuses keep changing (it must not: one entry per object,
// not one per change).
//   npx tsx bench/apiserver.ts (a full GC is run before each memory sample); BENCH_DEBUG=1 prints each run
// Convergence is timed three ways: a fresh cluster (wiped store) appearing under an agent that waits
// for it, as on a node where kubeadm init starts kube-apiserver; the same server back after a short
// outage during which every status changed, as when kube-apiserver restarts; and the return after
// the long outage of the memory run (6000 status changes, the event buffer full).
// The heap grows a little at first (the bounded event buffer fills: at most 1000 events, fewer
// after the per-object spam filter); from half-way on it must stay flat.
import { mkdtempSync, rmSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Lease } from 'kubernetes-types/coordination/v1';
import type { Node, Pod } from 'kubernetes-types/core/v1';
import { startApiSide, type ApiSide } from '../src/apiserver/api-side.js';
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

/** The target of issue 10: API server reachable again → Node, Lease, 50 mirror pods and statuses right. */
export const API_CONVERGE_TARGET_MS = 500;

export interface Convergence {
  /** API server started → all right, per run. */
  runs: number[];
  p50Ms: number;
  /** From the agent's first answer from the server to converged: the work, without the probe's wait. */
  afterContactP50Ms: number;
}

export interface ApiServerBenchResult {
  pods: number;
  /** A fresh cluster appearing under an agent that waits for it. */
  fresh: Convergence;
  /** The same server back after a short outage in which every pod's status changed. */
  back: Convergence;
  /** Back after the long outage of the memory run: every status changed, the event buffer full. */
  afterLongOutageMs: number;
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

/** Node Ready, Lease renewed at or after `sinceMs` (wall clock), every mirror current with `restarts`. */
function converged(api: FakeApiServer, pods: FakeStaticPods, restarts: number, sinceMs: number): boolean {
  const node = api.object('nodes', '', NODE) as unknown as Node | undefined;
  if (node?.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') return false;
  const lease = api.object('leases', 'kube-node-lease', NODE) as unknown as Lease | undefined;
  if (!(Date.parse(lease?.spec?.renewTime ?? '') >= sinceMs)) return false;
  return pods.list().every((sp) => {
    const m = api.object('pods', sp.pod.metadata.namespace, sp.pod.metadata.name) as unknown as Pod | undefined;
    return (
      m?.metadata?.annotations?.['kubernetes.io/config.mirror'] === sp.uid &&
      m.status?.containerStatuses?.[0]?.restartCount === restarts
    );
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
  const start = (): ApiSide =>
    startApiSide({
      kubeconfigPath: kubeconfig,
      nodeInfo: fakeNodeInfo(NODE),
      staticPods: pods,
      statuses,
      logger: nullLogger,
    });
  let agent: ApiSide | undefined;
  // Started at spread moments of the agent's probing, not in step with it.
  const spread = (run: number): number => 1000 + (1000 * (run + 0.5)) / RUNS;
  /** Starts the server and times it until all is right. */
  const timeReturn = async (restarts: number, label: string): Promise<{ total: number; afterContact: number }> => {
    const t0 = performance.now();
    const since = Date.now();
    await api.start();
    let upAt: number | undefined;
    await waitFor(
      () => {
        if (upAt === undefined && agent!.state().connected) upAt = performance.now();
        return converged(api, pods, restarts, since);
      },
      { timeoutMs: 60_000, intervalMs: 2, what: `${label}: node, lease, ${PODS} mirror pods with status` },
    );
    const end = performance.now();
    if (process.env.BENCH_DEBUG)
      console.log(`${label}: up after ${((upAt ?? t0) - t0).toFixed(0)} ms, converged ${(end - t0).toFixed(0)} ms`);
    return { total: end - t0, afterContact: end - (upAt ?? t0) };
  };
  const summary = (rs: { total: number; afterContact: number }[]): Convergence => {
    const runs = rs.map((r) => r.total);
    return {
      runs,
      p50Ms: percentile(runs, 50),
      afterContactP50Ms: percentile(
        rs.map((r) => r.afterContact),
        50,
      ),
    };
  };
  let restarts = 0;
  try {
    // A fresh cluster (wiped store) appearing under an agent that waits for it.
    const fresh: { total: number; afterContact: number }[] = [];
    for (let run = 0; run < RUNS; run++) {
      await api.stop();
      api.wipe();
      await agent?.stop();
      agent = start();
      await sleep(spread(run)); // the agent has found the server absent and is probing
      fresh.push(await timeReturn(restarts, `fresh ${run}`));
    }

    // The same server back after a short outage; every status changed meanwhile.
    const back: { total: number; afterContact: number }[] = [];
    for (let run = 0; run < RUNS; run++) {
      await sleep(500);
      await api.stop();
      await waitFor(() => !agent!.state().connected, { timeoutMs: 30_000, what: 'the agent to see the server gone' });
      restarts++;
      for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp, restarts));
      await sleep(spread(run));
      back.push(await timeReturn(restarts, `back ${run}`));
    }

    // Memory while away: steady state, then the server goes, statuses change AWAY_CHANGES times.
    await sleep(1000);
    await api.stop();
    await waitFor(() => !agent!.state().connected, { timeoutMs: 30_000, what: 'the agent to see the server gone' });
    await sleep(500);
    const before = sample();
    let mid = before;
    for (let i = 0; i < AWAY_CHANGES; i++) {
      if (i === AWAY_CHANGES / 2) {
        await sleep(500);
        mid = sample();
      }
      const sp = pods.list()[i % PODS];
      if (i % PODS === 0) restarts++;
      statuses.set(sp.uid, runningStatus(sp, restarts));
      agent!.recorder.event(
        { kind: 'Pod', namespace: sp.pod.metadata.namespace, name: sp.pod.metadata.name, uid: sp.uid },
        'Warning',
        'BackOff',
        `Back-off restarting failed container (restart ${restarts})`,
      );
      if (i % 100 === 99) await sleep(10); // let probes and timers run, as they would over 10 minutes
    }
    await sleep(500);
    const after = sample();
    // And it all lands when the server is back.
    const long = await timeReturn(restarts, 'after the long outage');
    return {
      pods: PODS,
      fresh: summary(fresh),
      back: summary(back),
      afterLongOutageMs: long.total,
      memory: { before, mid, after, changes: AWAY_CHANGES, gc: collector() !== undefined },
    };
  } finally {
    await agent?.stop();
    await api.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printApiServerBench(r: ApiServerBenchResult): void {
  const f = (n: number): string => n.toFixed(1);
  const verdict = (ms: number): string => (ms <= API_CONVERGE_TARGET_MS ? 'ok' : 'OVER TARGET');
  const line = (what: string, c: Convergence): string =>
    `${what}: p50 ${f(c.p50Ms)} ms (runs: ${c.runs.map(f).join(', ')}; target ≤ ${API_CONVERGE_TARGET_MS}) ${verdict(c.p50Ms)}; after the first answer: p50 ${f(c.afterContactP50Ms)} ms`;
  console.log(`API server reachable → Node, Lease, ${r.pods} mirror pods and statuses right`);
  console.log(`  ${line('fresh cluster', r.fresh)}`);
  console.log(`  ${line('back after a short outage', r.back)}`);
  console.log(
    `  back after the long outage below (every status changed, event buffer full): ${f(r.afterLongOutageMs)} ms`,
  );
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
