// The pod the benchmark starts, both as a manifest for bootlet and as the direct CRI calls of the
// baselines:
// - bare (what a user would compare against): the three calls any agent must make for a busybox
//   hostNetwork pod, RunPodSandbox, CreateContainer and StartContainer, with the least config the
//   runtime takes (metadata, host network, the image and command);
// - the bench's first baseline: the same calls with the configs bootlet's own code builds, so the
//   two send the runtime the same requests.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Container } from 'kubernetes-types/core/v1';
import { TEST_IMAGES } from '../dev/images.js';
import { NamespaceMode, type ImageService, type PodSandboxConfig, type RuntimeService } from '../src/cri/cri-types.js';
import type { LabelledPod } from '../src/k8s/pod.js';
import { buildSandboxConfig } from '../src/kuberuntime/sandbox-config.js';
import { podLogDirectory } from '../src/node/pod-logs/layout.js';
import { POD_NAME_LABEL } from './user-view.js';
import { hostContainerConfig } from '../test/support/host-container-config.js';

export const BENCH_NODE = 'bench-node';
const COMMAND = ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"];

/** Writes beside and renames into place, as tooling that installs a manifest does; returns performance.now() at the rename. */
export function writeAtomically(dir: string, file: string, content: string): number {
  const tmp = path.join(dir, `.${file}.tmp`);
  writeFileSync(tmp, content);
  const at = performance.now();
  renameSync(tmp, path.join(dir, file));
  return at;
}

export function benchPodManifest(name: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ${JSON.stringify(COMMAND)}
`;
}

export interface RawContext {
  runtime: RuntimeService;
  images: ImageService;
  podLogsDir: string;
  rootDir: string;
}

export interface RawPod {
  sandboxId: string;
  containerId: string;
  /** ms from the call to RunPodSandbox returning. */
  sandboxMs: number;
}

let imageRef: string | undefined;

/**
 * The bare baseline: three calls, configs written out by hand. The pod-name label only lets the
 * poller tell the pods apart (bootlet's pods carry the same label).
 */
export async function bareStartPod(runtime: RuntimeService, podName: string): Promise<RawPod> {
  const uid = `bare${podName.replace(/[^a-z0-9]/g, '')}`.padEnd(32, '0').slice(0, 32);
  const labels = { [POD_NAME_LABEL]: podName };
  const sandboxConfig: PodSandboxConfig = {
    metadata: { name: podName, namespace: 'default', uid, attempt: 0 },
    labels,
    linux: { securityContext: { namespaceOptions: { network: NamespaceMode.NODE } } },
  };
  const t0 = performance.now();
  const sandboxId = await runtime.runPodSandbox(sandboxConfig);
  const sandboxMs = performance.now() - t0;
  const containerId = await runtime.createContainer(
    sandboxId,
    { metadata: { name: 'main', attempt: 0 }, image: { image: TEST_IMAGES.busybox }, command: COMMAND, labels },
    sandboxConfig,
  );
  await runtime.startContainer(containerId);
  return { sandboxId, containerId, sandboxMs };
}

export async function rawStartPod(ctx: RawContext, name: string): Promise<RawPod> {
  const uid = `raw${name.replace(/[^a-z0-9]/g, '')}`.padEnd(32, '0').slice(0, 32);
  const container: Container = {
    name: 'main',
    image: TEST_IMAGES.busybox,
    command: COMMAND,
    imagePullPolicy: 'IfNotPresent',
  };
  const pod: LabelledPod = {
    metadata: {
      name: `${name}-${BENCH_NODE}`,
      namespace: 'default',
      uid,
      annotations: { 'kubernetes.io/config.source': 'file' },
    },
    spec: { hostNetwork: true, terminationGracePeriodSeconds: 2, containers: [container], nodeName: BENCH_NODE },
  };
  imageRef ??= (await ctx.images.imageStatus({ image: TEST_IMAGES.busybox }))?.id;
  if (!imageRef) throw new Error(`${TEST_IMAGES.busybox} is not imported`);
  const logDir = podLogDirectory(ctx.podLogsDir, pod);
  mkdirSync(path.join(logDir, 'main'), { recursive: true });
  const sandboxConfig = buildSandboxConfig(pod, { podLogsDir: ctx.podLogsDir, attempt: 0, resolvConf: '' });
  const t0 = performance.now();
  const sandboxId = await ctx.runtime.runPodSandbox(sandboxConfig);
  const sandboxMs = performance.now() - t0;
  const config = hostContainerConfig(pod, container, { nodeName: BENCH_NODE, imageRef });
  const containerId = await ctx.runtime.createContainer(sandboxId, config, sandboxConfig);
  await ctx.runtime.startContainer(containerId);
  return { sandboxId, containerId, sandboxMs };
}

/** containerd 1.6 under load sometimes drops a shim connection ("ttrpc: closed"); teardown retries. */
async function retry(what: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await what();
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

export async function rawStopPod(ctx: RawContext, p: RawPod): Promise<void> {
  await retry(() => ctx.runtime.stopContainer(p.containerId, 2));
  await retry(() => ctx.runtime.removeContainer(p.containerId));
  await retry(() => ctx.runtime.stopPodSandbox(p.sandboxId));
  await retry(() => ctx.runtime.removePodSandbox(p.sandboxId));
}
