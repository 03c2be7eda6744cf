// What each field of bootlet's PodSandboxConfig / ContainerConfig costs the runtime (issue 18):
// `npx tsx bench/config-cost.ts`. On a private containerd, starts the bench's busybox hostNetwork
// pod by the three direct calls, with the bare config, with the bare config plus one of bootlet's
// fields, and with bootlet's whole config minus one field, in rounds (each variant once per round,
// in turn), and prints the p50 of each phase. Not a section of `npm run bench`: a diagnosis tool.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Container } from 'kubernetes-types/core/v1';
import { cleanupStaleContainerds, startContainerd } from '../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../dev/images.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';
import { connectRuntime } from '../src/cri/cri-client.js';
import {
  NamespaceMode,
  type ContainerConfig,
  type PodSandboxConfig,
  type RuntimeService,
} from '../src/cri/cri-types.js';
import { buildSandboxConfig } from '../src/kuberuntime/sandbox-config.js';
import type { LabelledPod } from '../src/k8s/pod.js';
import { podLogDirectory } from '../src/node/pod-logs/layout.js';
import { prepareVolumes } from '../src/node/volumes.js';
import { startPodCgroups } from '../src/cm/start.js';
import { createLogger } from '../src/log/logger.js';
import { percentile } from './report.js';
import { BENCH_NODE } from './pods.js';
import { hostContainerConfig } from '../test/support/host-container-config.js';

const ROUNDS = Number(process.env.COST_ROUNDS ?? 8);
const COMMAND = ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"];

interface Configs {
  sandbox: PodSandboxConfig;
  container: ContainerConfig;
}

type Variant = { name: string; make: (full: Configs, bare: Configs) => Configs };

const SANDBOX_FIELDS = [
  'cgroupParent',
  'logDirectory',
  'dnsConfig',
  'labels',
  'annotations',
  'seccomp',
  'sysctls',
] as const;
const CONTAINER_FIELDS = [
  'logPath',
  'mounts',
  'envs',
  'labels',
  'annotations',
  'resources',
  'securityContext',
  'userSpecifiedImage',
] as const;
type SandboxField = (typeof SANDBOX_FIELDS)[number];
type ContainerField = (typeof CONTAINER_FIELDS)[number];

function copySandbox(to: PodSandboxConfig, from: PodSandboxConfig, f: SandboxField): PodSandboxConfig {
  const linux = { ...to.linux, securityContext: { ...to.linux?.securityContext } };
  switch (f) {
    case 'cgroupParent':
      return { ...to, linux: { ...linux, cgroupParent: from.linux?.cgroupParent ?? '' } };
    case 'sysctls':
      return { ...to, linux: { ...linux, sysctls: from.linux?.sysctls ?? {} } };
    case 'seccomp':
      return {
        ...to,
        linux: {
          ...linux,
          securityContext: { ...linux.securityContext, seccomp: from.linux?.securityContext?.seccomp },
        },
      };
    case 'labels':
      return { ...to, labels: from.labels };
    default:
      return { ...to, [f]: from[f] };
  }
}

function copyContainer(to: ContainerConfig, from: ContainerConfig, f: ContainerField): ContainerConfig {
  switch (f) {
    case 'resources':
      return { ...to, linux: { ...to.linux, resources: from.linux?.resources } };
    case 'securityContext':
      return { ...to, linux: { ...to.linux, securityContext: from.linux?.securityContext } };
    case 'userSpecifiedImage':
      return { ...to, image: from.image };
    default:
      return { ...to, [f]: from[f] };
  }
}

/** Fields of the other side that go together (a log path means nothing without the sandbox's log directory). */
const VARIANTS: Variant[] = [
  { name: 'bare', make: (_, bare) => bare },
  { name: 'bootlet (all)', make: (full) => full },
  ...SANDBOX_FIELDS.map((f) => ({
    name: `all - sandbox.${f}`,
    make: (full: Configs, bare: Configs) => ({ ...full, sandbox: copySandbox(full.sandbox, bare.sandbox, f) }),
  })),
  ...CONTAINER_FIELDS.map((f) => ({
    name: `all - container.${f}`,
    make: (full: Configs, bare: Configs) => ({ ...full, container: copyContainer(full.container, bare.container, f) }),
  })),
  {
    name: 'all - both logs',
    make: (full: Configs, bare: Configs) => ({
      sandbox: copySandbox(full.sandbox, bare.sandbox, 'logDirectory'),
      container: copyContainer(full.container, bare.container, 'logPath'),
    }),
  },
  ...(process.env.COST_ADD
    ? SANDBOX_FIELDS.map((f) => ({
        name: `bare + sandbox.${f}`,
        make: (full: Configs, bare: Configs) => ({ ...bare, sandbox: copySandbox(bare.sandbox, full.sandbox, f) }),
      }))
    : []),
  ...(process.env.COST_ADD
    ? CONTAINER_FIELDS.map((f) => ({
        name: `bare + container.${f}`,
        make: (full: Configs, bare: Configs) => ({
          ...bare,
          container: copyContainer(bare.container, full.container, f),
        }),
      }))
    : []),
];

/** COST_ONLY=name,name: only those variants (and bootlet's whole config, which the others are paired with). */
const ONLY = process.env.COST_ONLY?.split(',');
const RUN = VARIANTS.filter((v) => !ONLY || v.name === 'bootlet (all)' || ONLY.includes(v.name));

/** A new order each round: a load that changes during the run favours no variant. */
function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

interface Timing {
  sandbox: number;
  create: number;
  start: number;
}

async function startOnce(runtime: RuntimeService, c: Configs): Promise<Timing> {
  const t0 = performance.now();
  const sandboxId = await runtime.runPodSandbox(c.sandbox);
  const t1 = performance.now();
  const containerId = await runtime.createContainer(sandboxId, c.container, c.sandbox);
  const t2 = performance.now();
  await runtime.startContainer(containerId);
  const t3 = performance.now();
  await runtime.stopContainer(containerId, 2);
  await runtime.removeContainer(containerId);
  await runtime.stopPodSandbox(sandboxId);
  await runtime.removePodSandbox(sandboxId);
  return { sandbox: t1 - t0, create: t2 - t1, start: t3 - t2 };
}

async function main(): Promise<void> {
  await cleanupStaleContainerds();
  const dir = makeTmpDir('config-cost');
  const cd = await startContainerd({ name: 'config-cost' });
  try {
    await importTestImages(cd);
    const { runtime, images } = await connectRuntime(cd.endpoint);
    const logger = createLogger({ format: 'text', verbosity: 0 });
    const cgroups = await startPodCgroups(
      { cgroupDriver: 'cgroupfs', cgroupsPerQOS: true, cgroupRoot: '/' },
      runtime,
      logger,
    );
    const imageRef = (await images.imageStatus({ image: TEST_IMAGES.busybox }))?.id;
    if (!imageRef) throw new Error('busybox not imported');
    const podLogsDir = path.join(dir, 'pods');
    const rootDir = path.join(dir, 'root');
    const resolvConf = readFileSync('/etc/resolv.conf', 'utf8');
    let n = 0;
    const configsFor = async (tag: string): Promise<{ full: Configs; bare: Configs }> => {
      n++;
      const name = `cost${n}-${tag}`.replace(/[^a-z0-9-]/g, '').slice(0, 50);
      const uid = `c0st${n}`.padEnd(32, '0');
      const container: Container = {
        name: 'main',
        image: TEST_IMAGES.busybox,
        command: COMMAND,
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
      };
      const pod: LabelledPod = {
        metadata: {
          name: `${name}-${BENCH_NODE}`,
          namespace: 'default',
          uid,
          annotations: {
            'kubernetes.io/config.source': 'file',
            'kubernetes.io/config.hash': uid,
            'kubernetes.io/config.seen': new Date().toISOString(),
          },
        },
        spec: {
          hostNetwork: true,
          terminationGracePeriodSeconds: 2,
          containers: [container],
          nodeName: BENCH_NODE,
          dnsPolicy: 'ClusterFirst',
          restartPolicy: 'Always',
        },
      };
      await cgroups.ensurePodCgroup(pod);
      mkdirSync(path.join(podLogDirectory(podLogsDir, pod), 'main'), { recursive: true });
      const sandbox = buildSandboxConfig(pod, {
        podLogsDir,
        attempt: 0,
        resolvConf,
        cgroupParent: cgroups.podCgroupParent(pod),
      });
      const mounts = await prepareVolumes(pod, container, { rootDir });
      const full: ContainerConfig = hostContainerConfig(pod, container, { nodeName: BENCH_NODE, imageRef, mounts });
      const bareSandbox: PodSandboxConfig = {
        metadata: sandbox.metadata,
        labels: { 'io.kubernetes.pod.name': pod.metadata.name },
        linux: { securityContext: { namespaceOptions: { network: NamespaceMode.NODE } } },
      };
      const bareContainer: ContainerConfig = {
        metadata: { name: 'main', attempt: 0 },
        image: { image: TEST_IMAGES.busybox },
        command: COMMAND,
        labels: bareSandbox.labels,
      };
      return { full: { sandbox, container: full }, bare: { sandbox: bareSandbox, container: bareContainer } };
    };
    // Warm-up: the first start of an image pays for its snapshot and caches.
    for (const v of VARIANTS.slice(0, 2)) {
      const c = await configsFor('warm');
      await startOnce(runtime, v.make(c.full, c.bare));
    }
    const times = new Map<string, Timing[]>(RUN.map((v) => [v.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of shuffled(RUN)) {
        const c = await configsFor(v.name);
        times.get(v.name)!.push(await startOnce(runtime, v.make(c.full, c.bare)));
      }
      process.stderr.write(`round ${round + 1}/${ROUNDS}\n`);
    }
    // Each variant against bootlet's whole config in the same round: the median of those differences.
    const total = (t: Timing) => t.sandbox + t.create + t.start;
    const all = times.get('bootlet (all)')!;
    console.log(
      `p50 of ${ROUNDS} rounds (ms)            RunPodSandbox  CreateContainer  StartContainer    total  paired vs all`,
    );
    for (const v of RUN) {
      const ts = times.get(v.name)!;
      const p = (f: (t: Timing) => number) => percentile(ts.map(f), 50);
      const paired = percentile(
        ts.map((t, i) => total(t) - total(all[i]!)),
        50,
      );
      console.log(
        `${v.name.padEnd(36)} ${p((t) => t.sandbox)
          .toFixed(1)
          .padStart(10)} ${p((t) => t.create)
          .toFixed(1)
          .padStart(14)} ${p((t) => t.start)
          .toFixed(1)
          .padStart(15)} ${p(total).toFixed(1).padStart(8)} ${paired.toFixed(1).padStart(10)}`,
      );
    }
    runtime.close();
    cgroups.stop();
  } finally {
    await cd.stop();
    removeTmpDir(dir);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
