// In-place pod resize (KEP-1287) of an API pod: the packaged agent on a real containerd, the fake API
// server's pods/resize, and the real kubectl of 1.36 (`kubectl patch --subresource resize`). A resize
// its policy allows changes the container's cgroup limits (cpu quota and shares, memory limit) and the
// pod cgroup's without a restart (same container, restartCount 0), with status.containerStatuses[]
// resources and allocatedResources following; a RestartContainer policy restarts the container with
// the new limits; a resize larger than the node is PodResizePending/Infeasible and changes nothing;
// and a restarted agent keeps the allocation (the kubelet's allocated_pods_state checkpoint).
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'resize-e2e';
const h = useAgentHarness('resize', NODE);
let api: FakeApiServer;
let kubectl: Kubectl;
let kubeconfig = '';
const MI = 1024 * 1024;

function launch(): void {
  h.launch({
    extraArgs: ['--v=3', `--kubeconfig=${kubeconfig}`, '--node-ip=127.0.0.1', `--cert-dir=${join(h.rootDir, 'pki')}`],
  });
}

beforeAll(async () => {
  api = await startFakeApiServer({ dir: h.dir });
  // Debian sid's kubectl 1.36 (dev/kubectl.ts), which has `patch --subresource resize`.
  kubectl = new Kubectl(api.writeAdminKubeconfig(join(h.dir, 'admin.kubeconfig')), h.dir);
  kubeconfig = api.writeKubeconfig(join(h.dir, 'kubelet.conf'), `system:node:${NODE}`, ['system:nodes']);
  launch();
});

let failed = false;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});

afterAll(async () => {
  if (failed || process.env.SHOW_AGENT_LOG) console.log(`agent log:\n${h.agent().lines.slice(-80).join('\n')}`);
  await api?.dispose();
});

async function runtimePod(): Promise<RuntimePod | undefined> {
  const runtime = h.cri().runtime;
  const listed = [...(await listRuntimePods(runtime)).values()].find((p) => p.name === 'resize-me');
  return listed ? readRuntimePod(runtime, listed.uid) : undefined;
}

const running = (p: RuntimePod | undefined, name: string) =>
  p?.containers.find((c) => c.name === name && c.state === ContainerState.CONTAINER_RUNNING);

const apiPod = (): Pod | undefined => api.pod('default', 'resize-me');
const statusOf = (name: string) => apiPod()?.status?.containerStatuses?.find((s) => s.name === name);
const condition = (type: string) => apiPod()?.status?.conditions?.find((c) => c.type === type);

/** The container's own cgroup limits, read inside it (cgroup v1: runc mounts its cgroup there) and its cgroup path. */
async function limitsOf(id: string): Promise<{ quota: number; shares: number; memory: number; cgroup: string }> {
  const r = await h
    .cri()
    .runtime.execSync(
      id,
      [
        'sh',
        '-c',
        'cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/memory/memory.limit_in_bytes; grep memory /proc/self/cgroup',
      ],
      10,
    );
  const [quota, shares, memory, cgroupLine] = r.stdout.toString().trim().split('\n');
  return {
    quota: Number(quota),
    shares: Number(shares),
    memory: Number(memory),
    cgroup: cgroupLine!.split(':')[2]!,
  };
}

/** The pod cgroup's memory limit, read on the host (the container's cgroup's parent). */
function podMemoryLimit(containerCgroup: string): number {
  const pod = containerCgroup.split('/').slice(0, -1).join('/');
  return Number(fs.readFileSync(join('/sys/fs/cgroup/memory', pod, 'memory.limit_in_bytes'), 'utf8').trim());
}

async function resize(patch: object): Promise<void> {
  await kubectl.ok(['patch', 'pod', 'resize-me', '--subresource', 'resize', '--patch', JSON.stringify(patch)]);
}

describe('in-place pod resize', () => {
  it('changes the cgroup limits without a restart where the policy allows, with status following', async () => {
    await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'resize-me', namespace: 'default' },
      spec: {
        nodeName: NODE,
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            command: ['sleep', '86400'],
            resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
          },
          {
            name: 'restarter',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            command: ['sleep', '86400'],
            resources: { requests: { cpu: '50m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
            resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
          },
        ],
      },
    };
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(pod));
    // The API server refuses a resize of a pod whose running containers report no resources: wait for them.
    await waitFor(() => statusOf('main')?.resources && statusOf('restarter')?.resources, {
      timeoutMs: 60_000,
      what: 'both containers running with their resources in status',
    });
    expect(statusOf('main')).toMatchObject({
      allocatedResources: { cpu: '100m', memory: '32Mi' },
      resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
    });
    const before = running(await runtimePod(), 'main')!;
    const was = await limitsOf(before.id);
    expect(was).toMatchObject({ quota: 20000, shares: 102, memory: 64 * MI });
    expect(podMemoryLimit(was.cgroup)).toBe(96 * MI);

    await resize({
      spec: {
        containers: [
          { name: 'main', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m', memory: '96Mi' } } },
        ],
      },
    });
    const now = await waitFor(
      async () => {
        const l = await limitsOf(before.id);
        return l.quota === 30000 && l.memory === 96 * MI ? l : undefined;
      },
      { timeoutMs: 30_000, what: "main's cgroup with the new limits" },
    );
    expect(now.shares).toBe(153);
    expect(podMemoryLimit(now.cgroup)).toBe(128 * MI);
    const after = await runtimePod();
    expect(running(after, 'main')?.id).toBe(before.id);
    expect(running(after, 'main')?.meta.restartCount).toBe(0);
    await waitFor(
      () =>
        statusOf('main')?.resources?.limits?.cpu === '300m' &&
        condition('PodResizeInProgress') === undefined &&
        condition('PodResizePending') === undefined,
      { timeoutMs: 30_000, what: 'status with the new resources and no resize condition' },
    );
    expect(statusOf('main')).toMatchObject({
      restartCount: 0,
      allocatedResources: { cpu: '150m', memory: '32Mi' },
      resources: { requests: { cpu: '150m', memory: '32Mi' }, limits: { cpu: '300m', memory: '96Mi' } },
    });
    expect(apiPod()?.metadata?.generation).toBe(2);
    // The allocation is the kubelet's checkpoint now.
    const cp = JSON.parse(fs.readFileSync(join(h.rootDir, 'allocated_pods_state'), 'utf8')) as { data: string };
    expect(JSON.parse(cp.data)).toMatchObject({
      entries: { [apiPod()!.metadata!.uid!]: { ContainerResources: { main: { limits: { cpu: '300m' } } } } },
    });
  });

  it('restarts a container whose resizePolicy says RestartContainer, with the new limits', async () => {
    const before = running(await runtimePod(), 'restarter')!;
    await resize({ spec: { containers: [{ name: 'restarter', resources: { limits: { memory: '48Mi' } } }] } });
    const restarted = await waitFor(
      async () => {
        const c = running(await runtimePod(), 'restarter');
        return c && c.id !== before.id ? c : undefined;
      },
      { timeoutMs: 30_000, what: 'restarter started again' },
    );
    expect(restarted.meta.restartCount).toBe(1);
    expect((await limitsOf(restarted.id)).memory).toBe(48 * MI);
    await waitFor(
      () => statusOf('restarter')?.restartCount === 1 && statusOf('restarter')?.resources?.limits?.memory === '48Mi',
      {
        timeoutMs: 30_000,
        what: 'status of the restarted container',
      },
    );
  });

  it('a resize larger than the node is PodResizePending/Infeasible and changes nothing; a restarted agent keeps the allocation', async () => {
    const before = running(await runtimePod(), 'main')!;
    await resize({
      spec: { containers: [{ name: 'main', resources: { requests: { cpu: '1000' }, limits: { cpu: '1000' } } }] },
    });
    const pending = await waitFor(() => condition('PodResizePending'), {
      timeoutMs: 30_000,
      what: 'PodResizePending',
    });
    expect(pending).toMatchObject({ status: 'True', reason: 'Infeasible' });
    // The pod's requests (both containers) against the node's allocatable cpu, in millicores.
    expect(pending.message).toMatch(/^Node didn't have enough capacity: cpu, requested: 1000050, capacity: \d+$/);
    expect((await limitsOf(before.id)).quota).toBe(30000);
    expect(statusOf('main')?.resources?.limits?.cpu).toBe('300m');

    await h.agent().kill('SIGTERM');
    launch();
    await h
      .agent()
      .waitForLog((r) => r.msg === 'Pod resize is pending', 'the resize judged again after the restart', 60_000);
    // Still the allocated limits, the same container, and the pending condition.
    const after = running(await runtimePod(), 'main');
    expect(after?.id).toBe(before.id);
    expect((await limitsOf(before.id)).quota).toBe(30000);
    expect(condition('PodResizePending')?.reason).toBe('Infeasible');
  });
});
