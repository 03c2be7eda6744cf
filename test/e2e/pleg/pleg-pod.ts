// Host-network pods started by raw CRI calls for the PLEG's end-to-end test and benchmark: one
// sandbox each, whose busybox container can be killed and replaced (a new attempt in the same
// sandbox) without the cost of a new sandbox.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Container } from 'kubernetes-types/core/v1';
import type { PrivateContainerd } from '../../../dev/containerd.js';
import { TEST_IMAGES } from '../../../dev/images.js';
import type { ImageService, PodSandboxConfig, RuntimeService } from '../../../src/cri/cri-types.js';
import type { LabelledPod } from '../../../src/k8s/pod.js';
import { buildSandboxConfig } from '../../../src/kuberuntime/sandbox-config.js';
import { podLogDirectory } from '../../../src/node/pod-logs/layout.js';
import { hostContainerConfig } from '../../support/host-container-config.js';

// Quiet while it runs (one sleep, not a loop that forks every second) and gone on TERM.
const COMMAND = ['sh', '-c', "trap 'exit 0' TERM; sleep 100000 & wait"];

export interface PlegPodContext {
  runtime: RuntimeService;
  images: ImageService;
  podLogsDir: string;
}

export interface PlegPod {
  uid: string;
  name: string;
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
  pod: LabelledPod;
  /** Containers not yet removed, oldest first. */
  containerIds: string[];
  /** Containers started so far: the next one's attempt (restartCount). */
  attempts: number;
  container: Container;
}

export interface PlegPodOptions {
  command?: string[];
  /** limits.memory, e.g. '16Mi'. */
  memoryLimit?: string;
}

export async function startPlegPod(ctx: PlegPodContext, name: string, opts: PlegPodOptions = {}): Promise<PlegPod> {
  const container: Container = {
    name: 'main',
    image: TEST_IMAGES.busybox,
    command: opts.command ?? COMMAND,
    imagePullPolicy: 'IfNotPresent',
    ...(opts.memoryLimit ? { resources: { limits: { memory: opts.memoryLimit } } } : {}),
  };
  const uid = `pleg${name.replace(/[^a-z0-9]/g, '')}${process.pid}`.padEnd(32, '0').slice(0, 32);
  const pod: LabelledPod = {
    metadata: {
      name: `${name}-pleg`,
      namespace: 'default',
      uid,
      annotations: { 'kubernetes.io/config.source': 'file' },
    },
    spec: { hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [container], nodeName: 'pleg' },
  };
  mkdirSync(path.join(podLogDirectory(ctx.podLogsDir, pod), 'main'), { recursive: true });
  const sandboxConfig = buildSandboxConfig(pod, { podLogsDir: ctx.podLogsDir, attempt: 0, resolvConf: '' });
  const sandboxId = await ctx.runtime.runPodSandbox(sandboxConfig);
  const p: PlegPod = { uid, name, sandboxId, sandboxConfig, pod, containerIds: [], attempts: 0, container };
  await startPlegContainer(ctx, p);
  return p;
}

/** Starts the next attempt of the pod's container; returns its id. */
export async function startPlegContainer(ctx: PlegPodContext, p: PlegPod): Promise<string> {
  const imageRef = (await ctx.images.imageStatus({ image: TEST_IMAGES.busybox }))?.id;
  if (!imageRef) throw new Error(`${TEST_IMAGES.busybox} is not imported`);
  const config = hostContainerConfig(p.pod, p.container, { nodeName: 'pleg', imageRef, restartCount: p.attempts++ });
  const id = await ctx.runtime.createContainer(p.sandboxId, config, p.sandboxConfig);
  p.containerIds.push(id);
  await ctx.runtime.startContainer(id);
  return id;
}

/** Best effort, whatever state a failed run left behind. */
export async function removePlegPod(ctx: PlegPodContext, p: PlegPod): Promise<void> {
  for (const id of p.containerIds) {
    await ctx.runtime.stopContainer(id, 1).catch(() => undefined);
    await ctx.runtime.removeContainer(id).catch(() => undefined);
  }
  await ctx.runtime.stopPodSandbox(p.sandboxId).catch(() => undefined);
  await ctx.runtime.removePodSandbox(p.sandboxId).catch(() => undefined);
}

/** The host pid of a running task, from `ctr tasks ls`. */
export async function taskPid(cd: PrivateContainerd, containerId: string): Promise<number> {
  const line = (await cd.ctr(['tasks', 'ls'], { timeoutMs: 30_000 }))
    .split('\n')
    .find((l) => l.startsWith(containerId));
  const pid = Number(line?.trim().split(/\s+/)[1]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no running task ${containerId} in ctr tasks ls`);
  return pid;
}
