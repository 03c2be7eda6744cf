// Container restart rules (KEP-5307, ContainerRestartRules, on in 1.35+) through the packaged agent on a
// real containerd, the fake API server and Debian sid's kubectl 1.36:
// - a static pod of restartPolicy Always whose container `once` has its own restartPolicy Never: `once`
//   ends and stays ended while its neighbour with no policy of its own (the pod's Always) is restarted
//   beside it, and the mirror pod stays Running;
// - an API pod of restartPolicy Never created with kubectl, whose container restarts only on exit code 42
//   (a rule Restart, In [42]): it exits 42 twice, is restarted twice (the second time after the 10 s
//   crash-loop back-off, CrashLoopBackOff in its status meanwhile), then exits 1 and is left ended; the
//   pod is Failed with restartCount 2, as `kubectl get pod` shows.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RuntimeContainer } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { SLEEP_LOOP } from '../../support/busybox-pod.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-restart-rules';
const MIRROR = `mixed-${NODE}`;
const h = useAgentHarness('restart-rules', NODE);
let api: FakeApiServer;
let kubectl: Kubectl;

const staticMixed = `apiVersion: v1
kind: Pod
metadata: {name: mixed, namespace: kube-system}
spec:
  hostNetwork: true
  restartPolicy: Always
  terminationGracePeriodSeconds: 2
  containers:
  - name: once
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "exit 3"]
    restartPolicy: Never
  - name: again
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "sleep 2; exit 3"]
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "${SLEEP_LOOP}"]
`;

/** Exits 42 on its first two runs (counted in an emptyDir, which outlives the container), then 1. */
const ruled: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'ruled', namespace: 'kube-system' },
  spec: {
    nodeName: NODE,
    hostNetwork: true,
    restartPolicy: 'Never',
    terminationGracePeriodSeconds: 2,
    containers: [
      {
        name: 'worker',
        image: TEST_IMAGES.busybox,
        imagePullPolicy: 'IfNotPresent',
        command: [
          'sh',
          '-c',
          'n=$(($(cat /runs/n 2>/dev/null || echo 0) + 1)); echo $n > /runs/n; [ $n -le 2 ] && exit 42; exit 1',
        ],
        restartPolicy: 'Never',
        restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }],
        volumeMounts: [{ name: 'runs', mountPath: '/runs' }],
      },
    ],
    volumes: [{ name: 'runs', emptyDir: {} }],
  },
};

const instancesOf = (containers: readonly RuntimeContainer[], name: string) =>
  containers.filter((c) => c.name === name);

const statusOf = (p: Pod | undefined, name: string): ContainerStatus | undefined =>
  p?.status?.containerStatuses?.find((s) => s.name === name);

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  const nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, [
    'system:nodes',
  ]);
  // Debian sid's kubectl 1.36 (the Kubectl default), which knows restartPolicyRules.
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  h.launch({ extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`] });
});

afterAll(async () => {
  await api?.dispose();
});

describe('container restart policies and rules', () => {
  it('a container of its own restartPolicy Never in an Always pod is not restarted, and the pod stays Running', async () => {
    h.write('mixed.yaml', staticMixed);
    // `again` (the pod's Always) restarted: the agent has synced the pod after both containers ended.
    const pod = await waitFor(
      async () => {
        const p = (await h.pods('mixed'))[0];
        return p && instancesOf(p.containers, 'again').some((c) => c.meta.restartCount >= 1) ? p : undefined;
      },
      { timeoutMs: 90_000, what: 'again restarted' },
    );
    const once = instancesOf(pod.containers, 'once');
    expect(once).toHaveLength(1);
    expect(once[0]).toMatchObject({ state: ContainerState.CONTAINER_EXITED, exitCode: 3 });
    expect(once[0]!.meta.restartCount).toBe(0);

    const mirror = await waitFor(
      () => {
        const m = api.pod('kube-system', MIRROR);
        const s = statusOf(m, 'once');
        return m?.status?.phase === 'Running' && s?.state?.terminated && (statusOf(m, 'again')?.restartCount ?? 0) >= 1
          ? m
          : undefined;
      },
      { timeoutMs: 60_000, what: 'the mirror Running with once terminated and again restarted' },
    );
    expect(statusOf(mirror, 'once')).toMatchObject({
      restartCount: 0,
      state: { terminated: { exitCode: 3, reason: 'Error' } },
    });
    // Still one instance of `once` after the agent's later syncs (again's back-off keeps it syncing).
    await waitFor(
      async () => {
        const p = (await h.pods('mixed'))[0];
        return p && instancesOf(p.containers, 'again').some((c) => c.meta.restartCount >= 2) ? p : undefined;
      },
      { timeoutMs: 60_000, what: 'again restarted a second time' },
    );
    expect(instancesOf((await h.pods('mixed'))[0]!.containers, 'once')).toHaveLength(1);
    const shown = JSON.parse(await kubectl.ok(['get', 'pod', '-n', 'kube-system', MIRROR, '-o', 'json'])) as Pod;
    expect(shown.status?.phase).toBe('Running');
    expect(statusOf(shown, 'once')?.restartCount).toBe(0);
    console.log((await kubectl.ok(['get', 'pod', '-n', 'kube-system', MIRROR])).trim());
  });

  it('a rule Restart on exit code 42 restarts only on 42, with the crash-loop back-off, in a Never pod', async () => {
    await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(ruled));
    // The second restart waits out the back-off: the API shows CrashLoopBackOff meanwhile.
    const backingOff = await waitFor(
      () => {
        const s = statusOf(api.pod('kube-system', 'ruled'), 'worker');
        return s?.state?.waiting?.reason === 'CrashLoopBackOff' ? s : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'worker in CrashLoopBackOff after exit 42' },
    );
    expect(backingOff.lastState?.terminated?.exitCode).toBe(42);
    expect(backingOff.restartCount).toBe(1);
    expect(api.pod('kube-system', 'ruled')?.status?.phase).toBe('Running');

    const failed = await waitFor(
      () => {
        const p = api.pod('kube-system', 'ruled');
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      { timeoutMs: 90_000, what: 'ruled Failed after exit 1' },
    );
    expect(statusOf(failed, 'worker')).toMatchObject({ restartCount: 2, state: { terminated: { exitCode: 1 } } });
    // The pod is terminal: the agent keeps only the last instance, which ran after the back-off.
    const last = (await h.namedPods('ruled')).flatMap((p) => instancesOf(p.containers, 'worker'));
    expect(last).toHaveLength(1);
    expect(last[0]).toMatchObject({ state: ContainerState.CONTAINER_EXITED, exitCode: 1 });
    expect(last[0]!.meta.restartCount).toBe(2);
    // finishedAt is whole seconds, never later than the real end: the gap can only read long.
    const secondExit = Date.parse(backingOff.lastState!.terminated!.finishedAt!);
    const gapMs = last[0]!.startedAt / 1e6 - secondExit;
    console.log(`ruled: second exit 42 → restarted after ${Math.round(gapMs)} ms (back-off 10 s)`);
    expect(gapMs).toBeGreaterThanOrEqual(9_000);
    const shown = JSON.parse(await kubectl.ok(['get', 'pod', '-n', 'kube-system', 'ruled', '-o', 'json'])) as Pod;
    expect(shown.status?.phase).toBe('Failed');
    expect(statusOf(shown, 'worker')?.restartCount).toBe(2);
    console.log((await kubectl.ok(['get', 'pod', '-n', 'kube-system', 'ruled'])).trim());
    expect(
      h
        .agent()
        .records()
        .filter((r) => String(r.msg).startsWith('BUG:')),
    ).toEqual([]);
  });
});
