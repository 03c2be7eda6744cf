// PLEG benchmark: how soon a container killed with SIGKILL is reported (ContainerDied), against the
// kubelet's 1000 ms relist period, and the CPU the PLEG costs while nothing happens with 30
// containers running. Both bootlet mechanisms run on the same kills: containerd task events + a slow
// safety-net relist (what bootlet picks on containerd 1.6), and relisting every second (what the
// kubelet does, and bootlet's fallback). `npx tsx bench/pleg.ts`, or runPlegBench() from bench/run.ts.
import { spawn } from 'node:child_process';
import { build } from 'esbuild';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startContainerd, type PrivateContainerd } from '../dev/containerd.js';
import { importTestImages } from '../dev/images.js';
import { nullLogger } from '../src/log/logger.js';
import { PodCache } from '../src/pleg/pod-cache.js';
import { RuntimeReader } from '../src/pleg/runtime-reader.js';
import { createPleg, DEFAULT_EVENTED_RELIST_PERIOD_MS, type EventedPleg } from '../src/pleg/pleg.js';
import { ContainerdEventsClient } from '../src/cri/containerd-events.js';
import { connectRuntime } from '../src/cri/cri-client.js';
import { ContainerState, type VersionResponse } from '../src/cri/cri-types.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';
import { waitFor } from '../test/support/wait.js';
import {
  removePlegPod,
  startPlegContainer,
  startPlegPod,
  taskPid,
  type PlegPod,
  type PlegPodContext,
} from '../test/e2e/pleg/pleg-pod.js';
import type { IdleMode, IdleResult } from './pleg-idle.js';
import { percentile, type Row } from './report.js';

/** The kubelet's genericPlegRelistPeriod: its worst-case detection delay, and our baseline. */
export const KUBELET_RELIST_PERIOD_MS = 1000;

export interface PlegBenchOptions {
  /** Reuse a running private containerd (with the test images imported); default: start one. */
  containerd?: PrivateContainerd;
  kills?: number;
  idlePods?: number;
  idleSeconds?: number;
  log?: (line: string) => void;
}

export interface Latency {
  samples: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

export interface IdleCpu {
  mode: IdleMode;
  mechanism: string;
  /** CPU of the whole process over the idle window, % of one core. */
  cpuPercent: number;
  /** The same minus the process without a PLEG ('none'): what the PLEG itself costs. */
  plegCpuPercent: number;
}

export interface PlegBenchResult {
  kubeletRelistPeriodMs: number;
  eventedRelistPeriodMs: number;
  /** kill -9 → containerd's /tasks/exit reaching a subscriber: what any event-driven PLEG waits for. */
  taskExitEvent: Latency;
  /** kill -9 → /tasks/delete: containerd's CRI plugin records the exit just after this. */
  taskDeleteEvent: Latency;
  /**
   * kill -9 → ContainerStatus says EXITED, polled every 5 ms in separate kills without a PLEG: the
   * floor of any PLEG that reads the CRI, relisting or evented.
   */
  criShowsExited: Latency;
  /** kill -9 → ContainerDied from bootlet's PLEG on containerd task events. */
  evented: Latency;
  /** kill -9 → ContainerDied from relisting every second (the kubelet's mechanism). */
  relist1s: Latency;
  idle: IdleCpu[];
  idlePods: number;
}

function latency(xs: number[]): Latency {
  return { samples: xs.length, p50Ms: percentile(xs, 50), p95Ms: percentile(xs, 95), maxMs: Math.max(...xs) };
}

/** Who the runtime says it is (VersionResponse): the PLEG picks its event source by it. */
type RuntimeVersion = Pick<VersionResponse, 'runtimeName' | 'runtimeVersion'>;

interface Watcher {
  pleg: EventedPleg;
  died: Map<string, number>;
}

function watcher(cri: PlegPodContext, endpoint: string, version: RuntimeVersion): Watcher {
  const died = new Map<string, number>();
  const pleg = createPleg({
    runtime: cri.runtime,
    reader: new RuntimeReader(cri.runtime, new PodCache()),
    endpoint,
    runtimeName: version.runtimeName,
    runtimeVersion: version.runtimeVersion,
    logger: nullLogger,
    onEvent: (e) => {
      if (e.type === 'ContainerDied' && !died.has(e.id)) died.set(e.id, performance.now());
    },
  });
  return { pleg, died };
}

async function measureKills(
  cd: PrivateContainerd,
  ctx: PlegPodContext,
  version: RuntimeVersion,
  kills: number,
  log: (l: string) => void,
) {
  const evented = watcher(ctx, cd.endpoint, version);
  const relisting = watcher(ctx, cd.endpoint, { runtimeName: 'relist-only', runtimeVersion: '' });
  const exitSeen = new Map<string, number>();
  const deleteSeen = new Map<string, number>();
  const events = new ContainerdEventsClient(cd.endpoint);
  const sub = events.subscribeTaskEvents(
    (e) => {
      const seen = e.topic === '/tasks/exit' ? exitSeen : e.topic === '/tasks/delete' ? deleteSeen : undefined;
      if (seen && !seen.has(e.containerId)) seen.set(e.containerId, performance.now());
    },
    () => {},
  );
  evented.pleg.start();
  relisting.pleg.start();
  const pod = await startPlegPod(ctx, 'killed');
  const result = {
    taskExit: [] as number[],
    taskDelete: [] as number[],
    evented: [] as number[],
    relist: [] as number[],
  };
  try {
    await waitFor(() => evented.pleg.mechanism() === 'containerd-events', {
      timeoutMs: 30_000,
      what: 'the containerd event stream',
    });
    for (let i = 0; i < kills; i++) {
      const id = pod.containerIds.at(-1)!;
      const pid = await taskPid(cd, id);
      // Both PLEGs have seen it running: a relist passed since it started.
      await evented.pleg.relist();
      await relisting.pleg.relist();
      // A random phase against the 1 s relist: the loop itself starts right after a detection, so
      // without it every kill would land at the same point of the relist period.
      await new Promise((r) => setTimeout(r, Math.random() * KUBELET_RELIST_PERIOD_MS));
      const t0 = performance.now();
      process.kill(pid, 'SIGKILL');
      await waitFor(() => evented.died.has(id) && relisting.died.has(id) && exitSeen.has(id) && deleteSeen.has(id), {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: `ContainerDied for kill ${i}`,
      });
      result.taskExit.push(exitSeen.get(id)! - t0);
      result.taskDelete.push(deleteSeen.get(id)! - t0);
      result.evented.push(evented.died.get(id)! - t0);
      result.relist.push(relisting.died.get(id)! - t0);
      await ctx.runtime.removeContainer(id);
      pod.containerIds = pod.containerIds.filter((c) => c !== id);
      // The next attempt in the same sandbox, rather than a new sandbox per kill.
      await startPlegContainer(ctx, pod);
      if ((i + 1) % 10 === 0) log(`  ${i + 1}/${kills} kills`);
    }
  } finally {
    evented.pleg.stop();
    relisting.pleg.stop();
    sub.cancel();
    events.close();
    await removePlegPod(ctx, pod);
  }
  return result;
}

/** The floor: how soon the CRI itself reports the container exited. */
async function measureCriFloor(cd: PrivateContainerd, ctx: PlegPodContext, kills: number): Promise<number[]> {
  const pod = await startPlegPod(ctx, 'floor');
  const out: number[] = [];
  try {
    for (let i = 0; i < kills; i++) {
      const id = pod.containerIds.at(-1)!;
      const pid = await taskPid(cd, id);
      const t0 = performance.now();
      process.kill(pid, 'SIGKILL');
      await waitFor(async () => (await ctx.runtime.containerStatus(id)).state === ContainerState.CONTAINER_EXITED, {
        timeoutMs: 30_000,
        intervalMs: 5,
        what: `CRI exit ${i}`,
      });
      out.push(performance.now() - t0);
      await ctx.runtime.removeContainer(id);
      pod.containerIds = pod.containerIds.filter((c) => c !== id);
      await startPlegContainer(ctx, pod);
    }
  } finally {
    await removePlegPod(ctx, pod);
  }
  return out;
}

/**
 * The idle child bundled to plain JavaScript, as the agent ships: under tsx an idle Node process
 * alone costs about 0.4 % of a core (its loader), which would drown what is measured.
 */
async function bundleIdleChild(dir: string): Promise<string> {
  const outfile = path.join(dir, 'pleg-idle.mjs');
  await build({
    entryPoints: [path.join(path.dirname(fileURLToPath(import.meta.url)), 'pleg-idle.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    logLevel: 'error',
  });
  return outfile;
}

function runIdleChild(script: string, endpoint: string, mode: IdleMode, seconds: number): Promise<IdleResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', script, endpoint, mode, String(seconds)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`pleg-idle ${mode} exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as IdleResult);
    });
  });
}

export async function runPlegBench(opts: PlegBenchOptions = {}): Promise<PlegBenchResult> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const kills = opts.kills ?? 50;
  const idlePods = opts.idlePods ?? 30;
  const idleSeconds = opts.idleSeconds ?? 20;
  const dir = makeTmpDir('bench-pleg');
  const cd = opts.containerd ?? (await startContainerd({ name: 'bench-pleg' }));
  const cri = await (async () => {
    if (!opts.containerd) await importTestImages(cd);
    return connectRuntime(cd.endpoint);
  })();
  const ctx: PlegPodContext = { runtime: cri.runtime, images: cri.images, podLogsDir: path.join(dir, 'logs') };
  const pods: PlegPod[] = [];
  try {
    log(`PLEG: ${kills} kills of a running container (kill -9 → ContainerDied)`);
    const k = await measureKills(cd, ctx, cri.version, kills, log);
    const floorKills = Math.max(10, Math.round(kills / 3));
    log(`PLEG: ${floorKills} kills without a PLEG, polling ContainerStatus (the CRI's own delay)`);
    const floor = await measureCriFloor(cd, ctx, floorKills);

    log(`PLEG: idle CPU with ${idlePods} running containers, ${idleSeconds} s per configuration`);
    for (let i = 0; i < idlePods; i++) pods.push(await startPlegPod(ctx, `idle${i}`));
    const runs: IdleResult[] = [];
    const script = await bundleIdleChild(dir);
    for (const mode of ['none', 'relist-1s', 'events-1s', 'events-default'] as const)
      runs.push(await runIdleChild(script, cd.endpoint, mode, idleSeconds));
    const pct = (r: IdleResult) => (100 * r.cpuMs) / r.wallMs;
    const base = pct(runs[0]!);
    return {
      kubeletRelistPeriodMs: KUBELET_RELIST_PERIOD_MS,
      eventedRelistPeriodMs: DEFAULT_EVENTED_RELIST_PERIOD_MS,
      taskExitEvent: latency(k.taskExit),
      taskDeleteEvent: latency(k.taskDelete),
      criShowsExited: latency(floor),
      evented: latency(k.evented),
      relist1s: latency(k.relist),
      idle: runs.map((r) => ({
        mode: r.mode,
        mechanism: r.mechanism,
        cpuPercent: pct(r),
        plegCpuPercent: pct(r) - base,
      })),
      idlePods,
    };
  } finally {
    for (const p of pods) await removePlegPod(ctx, p);
    cri.runtime.close();
    if (!opts.containerd) await cd.stop();
    removeTmpDir(dir);
  }
}

/** Rows for bench/report.ts's table: the kubelet's relist period is the baseline of detection. */
export function plegRows(r: PlegBenchResult): Row[] {
  return [
    {
      what: 'PLEG kill -9 → ContainerDied (p50), vs kubelet relist period',
      raw: r.kubeletRelistPeriodMs,
      bootlet: r.evented.p50Ms,
      target: 0.2,
    },
    {
      what: 'PLEG kill -9 → ContainerDied (p95), vs kubelet relist period',
      raw: r.kubeletRelistPeriodMs,
      bootlet: r.evented.p95Ms,
    },
  ];
}

export function printPlegResult(r: PlegBenchResult, log: (l: string) => void = (l) => console.log(l)): void {
  const k = r.kubeletRelistPeriodMs;
  const row = (what: string, l: Latency) =>
    `  ${what.padEnd(44)} p50 ${l.p50Ms.toFixed(0).padStart(5)} ms (${(l.p50Ms / k).toFixed(2)}× of ${k} ms)   p95 ${l.p95Ms.toFixed(0).padStart(5)} ms (${(l.p95Ms / k).toFixed(2)}×)   max ${l.maxMs.toFixed(0)} ms   n=${l.samples}`;
  log(`PLEG detection, kill -9 → event (baseline: the kubelet relists every ${k} ms)`);
  log(row('containerd /tasks/exit reaches a subscriber', r.taskExitEvent));
  log(row('containerd /tasks/delete reaches a subscriber', r.taskDeleteEvent));
  log(row('CRI ContainerStatus says EXITED (5 ms polls)', r.criShowsExited));
  log(row(`bootlet: task events + relist every ${r.eventedRelistPeriodMs / 1000} s`, r.evented));
  log(row('relist every 1 s (kubelet, bootlet fallback)', r.relist1s));
  log(`PLEG idle CPU with ${r.idlePods} running containers (% of one core; PLEG = minus a process without one)`);
  for (const i of r.idle)
    log(
      `  ${i.mode.padEnd(16)} mechanism ${i.mechanism.padEnd(18)} process ${i.cpuPercent.toFixed(3)} %   PLEG ${i.plegCpuPercent.toFixed(3)} %`,
    );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  runPlegBench({
    ...(process.env.BENCH_PLEG_KILLS ? { kills: Number(process.env.BENCH_PLEG_KILLS) } : {}),
    ...(process.env.BENCH_PLEG_IDLE_SECONDS ? { idleSeconds: Number(process.env.BENCH_PLEG_IDLE_SECONDS) } : {}),
  }).then(
    (r) => {
      printPlegResult(r);
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
