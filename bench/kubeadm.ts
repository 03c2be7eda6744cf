// kubeadm's control plane, from its four manifests written (as kubeadm writes them, into
// /etc/kubernetes/manifests) to all four containers running and etcd healthy over TLS: through
// bootlet (started as kubeadm's drop-in starts the kubelet, and ready before the clock starts),
// against the same four pods started by direct CRI calls (RunPodSandbox + CreateContainer +
// StartContainer for all four at once, configs built beforehand with bootlet's own code) on the
// same private containerd, alternating, in the same run. Each round starts from an empty
// /var/lib/etcd, so etcd bootstraps a new cluster every time, as on `kubeadm init`.
//
// Needs the machine's control-plane node (test/support/kubeadm-node.ts): skipped, saying why, when
// /etc/kubernetes exists or a port is taken.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupStaleContainerds, startContainerd, type PrivateContainerd } from '../dev/containerd.js';
import { importTestImages } from '../dev/images.js';
import { importKubeadmImages } from '../dev/kubeadm-images.js';
import { loadManifest } from '../src/config/manifest.js';
import { connectRuntime, type RuntimeConnection } from '../src/cri/cri-client.js';
import { ContainerState, type ContainerConfig, type PodSandboxConfig } from '../src/cri/cri-types.js';
import { buildSandboxConfig } from '../src/kuberuntime/sandbox-config.js';
import { podLogDirectory } from '../src/node/pod-logs/layout.js';
import { prepareVolumes } from '../src/node/volumes.js';
import { spawnAgent, type RunningAgent } from '../test/support/agent.js';
import {
  COMPONENTS,
  kubeadmImageRefs,
  kubeadmNodeUnavailable,
  manifestText,
  prepareKubeadmNode,
  type KubeadmNode,
  type KubeadmVersion,
} from '../test/support/kubeadm-node.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';
import { percentile, printTable } from './report.js';
import { traceAgent, traceRuntime, traceStart } from './kubeadm-trace.js';
import { hostContainerConfig } from '../test/support/host-container-config.js';

const ROUNDS = Number(process.env.BENCH_KUBEADM_ROUNDS ?? 5);
const VERSION = (process.env.BENCH_KUBEADM_VERSION ?? '1.34') as KubeadmVersion;
const POLL_MS = 20;
/** Before each clock starts: the previous round's teardown (containerd's snapshot and task cleanup) done. */
const SETTLE_MS = 1500;
const DEADLINE_MS = 120_000;

export interface KubeadmRound {
  /** Written (or first RunPodSandbox) → all four CONTAINER_RUNNING, ms. */
  running: number;
  /** → etcd /health 200 as well (the measured end), ms. */
  healthy: number;
  /** → etcd's container started (its CRI startedAt), ms: healthy minus this is etcd's own boot. */
  etcdStarted: number;
}

export interface KubeadmBenchResult {
  version: KubeadmVersion;
  raw: KubeadmRound[];
  bootlet: KubeadmRound[];
  /** bootlet's log: write → last manifest accepted, → last sandbox created, → last container started (p50 ms). */
  stages: { accepted: number[]; sandbox: number[]; started: number[] };
  /** Agent process start → "Manifests read" (outside the measured window), ms. */
  agentReady: number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh etcd data directory, flushed: etcd's first fsyncs must not pay for the last round's writes. */
function freshEtcd(node: KubeadmNode): void {
  node.resetEtcd();
  execFileSync('sync');
}

async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`kubeadm bench: timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/** Same end condition for both: four running control-plane containers, then etcd healthy. */
async function measureEnd(cri: RuntimeConnection, node: KubeadmNode, t0: number, wall0: number): Promise<KubeadmRound> {
  const running = await until('four running containers', async () => {
    const cs = await cri.runtime.listContainers();
    const up = cs.filter(
      (c) =>
        c.state === ContainerState.CONTAINER_RUNNING &&
        COMPONENTS.includes(c.labels['io.kubernetes.container.name'] as (typeof COMPONENTS)[number]),
    );
    return up.length === COMPONENTS.length ? up : undefined;
  });
  const runningMs = performance.now() - t0;
  await until('etcd /health', async () => {
    const h = await node.etcdHealth();
    return h.status === 200 && /"health":\s*"true"/.test(h.body) ? true : undefined;
  });
  const healthy = performance.now() - t0;
  const etcd = running.find((c) => c.labels['io.kubernetes.container.name'] === 'etcd')!;
  const startedAtMs = Number((await cri.runtime.containerStatus(etcd.id)).startedAt) / 1e6;
  return { running: runningMs, healthy, etcdStarted: startedAtMs - wall0 };
}

/** As bootlet stops them (SIGTERM, then the grace period), so both modes leave etcd's disk alike. */
async function removeAllPods(cri: RuntimeConnection): Promise<void> {
  await Promise.all((await cri.runtime.listContainers()).map((c) => cri.runtime.stopContainer(c.id, 30)));
  for (const s of await cri.runtime.listPodSandbox()) {
    await cri.runtime.stopPodSandbox(s.id);
    await cri.runtime.removePodSandbox(s.id);
  }
}

interface RawPod {
  sandbox: PodSandboxConfig;
  container: ContainerConfig;
  cgroup: string;
}

/** Everything but the three CRI calls, done before the clock starts. */
async function prepareRawPods(cri: RuntimeConnection, dir: string, round: number): Promise<RawPod[]> {
  const resolvConf = readFileSync('/etc/resolv.conf', 'utf8');
  const out: RawPod[] = [];
  for (const c of COMPONENTS) {
    const loaded = loadManifest(
      `/etc/kubernetes/manifests/${c}.yaml`,
      manifestText(VERSION, c),
      `raw${round}`,
      new Date(),
    );
    if ('error' in loaded) throw new Error(`kubeadm bench: ${c}: ${loaded.error.message}`);
    const pod = loaded.pod.pod;
    const container = pod.spec!.containers[0]!;
    const podLogsDir = path.join(dir, 'logs');
    mkdirSync(path.join(podLogDirectory(podLogsDir, pod), container.name), { recursive: true });
    // The pod cgroup bootlet would give it (all four are Burstable); runc makes it.
    const cgroup = `/kubepods/burstable/pod${pod.metadata.uid}`;
    const sandbox = buildSandboxConfig(pod, { podLogsDir, attempt: 0, resolvConf, cgroupParent: cgroup });
    const imageRef = (await cri.images.imageStatus({ image: container.image! }))?.id;
    if (!imageRef) throw new Error(`kubeadm bench: ${container.image} is not imported`);
    const mounts = await prepareVolumes(pod, container, { rootDir: path.join(dir, 'raw-root') });
    const config = hostContainerConfig(pod, container, { nodeName: `raw${round}`, imageRef, mounts });
    out.push({ sandbox, container: config, cgroup });
  }
  return out;
}

async function rawRound(cri: RuntimeConnection, node: KubeadmNode, dir: string, round: number): Promise<KubeadmRound> {
  freshEtcd(node);
  const pods = await prepareRawPods(cri, dir, round);
  await sleep(SETTLE_MS);
  const wall0 = Date.now();
  const t0 = performance.now();
  traceStart('raw');
  await Promise.all(
    pods.map(async (p) => {
      const sandboxId = await cri.runtime.runPodSandbox(p.sandbox);
      const id = await cri.runtime.createContainer(sandboxId, p.container, p.sandbox);
      await cri.runtime.startContainer(id);
    }),
  );
  const r = await measureEnd(cri, node, t0, wall0);
  traceRuntime('raw', containerdLog, wall0);
  await removeAllPods(cri);
  // Left by runc once the containers are gone (bootlet removes its own).
  for (const p of pods)
    for (const h of ['cpu', 'memory', 'pids', 'cpuset', 'blkio', 'devices', 'freezer', 'cpuacct', 'systemd'])
      rmdirQuiet(`/sys/fs/cgroup/${h}${p.cgroup}`);
  return r;
}

/** The bench's containerd's log, for the trace. */
let containerdLog = '';

function rmdirQuiet(p: string): void {
  try {
    rmdirSync(p);
  } catch {
    /* absent or v2 */
  }
}

async function bootletRound(
  cri: RuntimeConnection,
  node: KubeadmNode,
  argv: string[],
  res: KubeadmBenchResult,
): Promise<KubeadmRound> {
  freshEtcd(node);
  const started = performance.now();
  const agent: RunningAgent = spawnAgent(argv);
  try {
    await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'agent ready', 60_000);
    res.agentReady.push(performance.now() - started);
    await sleep(SETTLE_MS);
    const wall0 = Date.now();
    const t0 = performance.now();
    traceStart('bootlet');
    node.writeManifests(VERSION);
    const r = await measureEnd(cri, node, t0, wall0);
    const last = (msg: string) =>
      Math.max(
        ...agent
          .records()
          .filter((x) => x.msg === msg && String(x.pod).startsWith('kube-system/'))
          .map((x) => Number(x.ts) * 1000),
      ) - wall0;
    res.stages.accepted.push(last('Static pod manifest accepted'));
    res.stages.sandbox.push(last('Created pod sandbox'));
    res.stages.started.push(last('Started container'));
    traceAgent(agent.records(), wall0);
    traceRuntime('bootlet', containerdLog, wall0);
    node.removeManifests();
    await until('pods removed', async () => ((await cri.runtime.listPodSandbox()).length === 0 ? true : undefined));
    return r;
  } finally {
    node.removeManifests();
    await agent.kill('SIGTERM');
    await removeAllPods(cri);
  }
}

export async function runKubeadmBench(): Promise<KubeadmBenchResult | { skipped: string }> {
  const why = kubeadmNodeUnavailable();
  if (why) return { skipped: why };
  await cleanupStaleContainerds();
  const dir = makeTmpDir('bench-kubeadm');
  let cd: PrivateContainerd | undefined;
  let cri: RuntimeConnection | undefined;
  const node = await prepareKubeadmNode();
  try {
    cd = await startContainerd({ name: 'bench-kubeadm' });
    containerdLog = path.join(cd.dir, 'containerd.log');
    await importTestImages(cd);
    await importKubeadmImages(cd, kubeadmImageRefs([VERSION]));
    cri = await connectRuntime(cd.endpoint);
    node.expectHostPaths(VERSION);
    // As in the e2e test: kubeadm's drop-in, with the operator's overrides for this containerd.
    const argv = node
      .installKubelet(VERSION, [
        `--container-runtime-endpoint=${cd.endpoint}`,
        `--root-dir=${path.join(dir, 'root')}`,
        '--cgroup-driver=cgroupfs',
        '--resolv-conf=/etc/resolv.conf',
        '--healthz-port=0',
        '--logging-format=json',
        '--v=2',
      ])
      .slice(1);
    const res: KubeadmBenchResult = {
      version: VERSION,
      raw: [],
      bootlet: [],
      stages: { accepted: [], sandbox: [], started: [] },
      agentReady: [],
    };
    // One warm-up of each (page cache, snapshots, first TLS handshakes), then alternating rounds.
    await rawRound(cri, node, dir, 0);
    await bootletRound(cri, node, argv, { ...res, stages: { accepted: [], sandbox: [], started: [] }, agentReady: [] });
    // Alternating which goes first, so that neither always follows the other's teardown.
    for (let i = 1; i <= ROUNDS; i++) {
      if (i % 2 === 1) res.raw.push(await rawRound(cri, node, dir, i));
      res.bootlet.push(await bootletRound(cri, node, argv, res));
      if (i % 2 === 0) res.raw.push(await rawRound(cri, node, dir, i));
    }
    return res;
  } finally {
    if (cri) await removeAllPods(cri).catch(() => undefined);
    cri?.runtime.close();
    await cd?.stop();
    await node.cleanup();
    removeTmpDir(dir);
  }
}

export function printKubeadmBench(r: KubeadmBenchResult | { skipped: string }): void {
  if ('skipped' in r) {
    console.log(`skipped: ${r.skipped}`);
    return;
  }
  const p50 = (xs: number[]) => percentile(xs, 50);
  printTable([
    {
      what: `kubeadm ${r.version}: manifests written → 4 running + etcd healthy (p50 of ${r.raw.length})`,
      raw: p50(r.raw.map((x) => x.healthy)),
      bootlet: p50(r.bootlet.map((x) => x.healthy)),
      target: 1.1,
    },
    {
      what: `kubeadm ${r.version}: manifests written → 4 running (p50)`,
      raw: p50(r.raw.map((x) => x.running)),
      bootlet: p50(r.bootlet.map((x) => x.running)),
    },
  ]);
  const f = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' ');
  console.log(
    `rounds, ms (healthy): raw ${f(r.raw.map((x) => x.healthy))} | bootlet ${f(r.bootlet.map((x) => x.healthy))}`,
  );
  console.log(
    `where bootlet's time goes (p50, ms from the write): last manifest accepted ${p50(r.stages.accepted).toFixed(0)}, ` +
      `last sandbox created ${p50(r.stages.sandbox).toFixed(0)}, last container started ${p50(r.stages.started).toFixed(0)}, ` +
      `all running seen ${p50(r.bootlet.map((x) => x.running)).toFixed(0)}, etcd healthy ${p50(r.bootlet.map((x) => x.healthy)).toFixed(0)}`,
  );
  console.log(
    `etcd's own boot (its container started → /health 200, p50 ms): raw ${p50(r.raw.map((x) => x.healthy - x.etcdStarted)).toFixed(0)}, bootlet ${p50(r.bootlet.map((x) => x.healthy - x.etcdStarted)).toFixed(0)}; ` +
      `write → etcd started: raw ${p50(r.raw.map((x) => x.etcdStarted)).toFixed(0)}, bootlet ${p50(r.bootlet.map((x) => x.etcdStarted)).toFixed(0)}`,
  );
  console.log(`agent start → ready (not in the measured window): p50 ${p50(r.agentReady).toFixed(0)} ms`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runKubeadmBench()
    .then((r) => {
      printKubeadmBench(r);
      process.exit(0);
    })
    .catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
}
