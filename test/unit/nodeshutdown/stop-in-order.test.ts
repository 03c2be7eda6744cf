import type { Pod } from 'kubernetes-types/core/v1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { nullLogger } from '../../../src/log/logger.js';
import { stopInOrder, type ShutdownTarget } from '../../../src/nodeshutdown/stop-in-order.js';

// The control plane as kubeadm writes it: every pod system-node-critical, etcd's grace the default 30 s.
function target(name: string, component: string, grace?: number): ShutdownTarget {
  const pod: Pod = {
    metadata: { name, labels: { component } },
    spec: { containers: [], priorityClassName: 'system-node-critical', terminationGracePeriodSeconds: grace },
  };
  return { uid: name, key: `kube-system/${name}`, pod };
}
const controlPlane = () => [
  target('etcd', 'etcd'),
  target('kube-apiserver', 'kube-apiserver'),
  target('kube-controller-manager', 'kube-controller-manager'),
  target('kube-scheduler', 'kube-scheduler'),
];
/** shutdownGracePeriod 30 s, shutdownGracePeriodCriticalPods 10 s: shorter than etcd's 30 s. */
const periods = [
  { priority: 0, shutdownGracePeriodSeconds: 20 },
  { priority: 2_000_000_000, shutdownGracePeriodSeconds: 10 },
];

interface Call {
  pod: string;
  grace: number;
  askedAt: number;
  exitedAt?: number;
}

/** A stopper on the fake clock: each pod exits this long after it is asked to (ms), or at its grace if it hangs. */
function fakeStopper(exitAfterMs: Record<string, number | 'hang'>) {
  const calls: Call[] = [];
  const stopPod = (t: ShutdownTarget, grace: number) => {
    const call: Call = { pod: t.uid, grace, askedAt: Date.now() };
    calls.push(call);
    const after = exitAfterMs[t.uid] ?? 0;
    const ms = after === 'hang' ? grace * 1000 : Math.min(after, grace * 1000);
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        call.exitedAt = Date.now();
        resolve();
      }, ms),
    );
  };
  return { calls, stopPod };
}

async function run(exitAfterMs: Record<string, number | 'hang'>) {
  const stopper = fakeStopper(exitAfterMs);
  const t0 = Date.now();
  const done = stopInOrder(periods, controlPlane(), { stopPod: stopper.stopPod, logger: nullLogger });
  await vi.runAllTimersAsync();
  await done;
  const by = new Map(stopper.calls.map((c) => [c.pod, { ...c, askedAt: c.askedAt - t0, exitedAt: c.exitedAt! - t0 }]));
  return (name: string) => by.get(name)!;
}

describe('stopInOrder: the control plane in waves', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks each wave to stop once the previous one has exited, and gives etcd what remains', async () => {
    // The API server takes about a second to exit, the others a few hundred ms.
    const pod = await run({
      'kube-controller-manager': 300,
      'kube-scheduler': 200,
      'kube-apiserver': 1_100,
      etcd: 400,
    });
    expect(pod('kube-controller-manager').askedAt).toBe(0);
    expect(pod('kube-scheduler').askedAt).toBe(0);
    // Not at the same moment as etcd, and never before controller-manager and scheduler exited.
    expect(pod('kube-apiserver').askedAt).toBe(300);
    expect(pod('etcd').askedAt).toBe(pod('kube-apiserver').exitedAt);
    expect(pod('etcd').askedAt).toBe(1_400);
    // etcd gets the group's 10 s less what the earlier waves used, whole seconds as the kubelet counts them.
    expect(pod('etcd').grace).toBe(8);
    expect(pod('kube-apiserver').grace).toBe(4);
    expect(pod('kube-controller-manager').grace).toBe(3);
  });

  it('does not let a hung wave eat the later ones: each keeps a share of the group', async () => {
    const pod = await run({
      'kube-controller-manager': 'hang',
      'kube-scheduler': 100,
      'kube-apiserver': 'hang',
      etcd: 500,
    });
    expect(pod('kube-controller-manager').grace).toBe(3);
    expect(pod('kube-apiserver').askedAt).toBe(3_000);
    expect(pod('kube-apiserver').exitedAt).toBeLessThanOrEqual(pod('etcd').askedAt);
    // etcd still has time to exit cleanly.
    expect(pod('etcd').grace).toBeGreaterThanOrEqual(3);
    expect(pod('etcd').exitedAt).toBeLessThanOrEqual(10_000);
  });

  it('stops ordinary pods first, in their own group, before any of the control plane', async () => {
    const stopper = fakeStopper({ web: 2_000 });
    const web: ShutdownTarget = {
      uid: 'web',
      key: 'default/web',
      pod: { metadata: { name: 'web' }, spec: { containers: [] } },
    };
    const t0 = Date.now();
    const done = stopInOrder(periods, [...controlPlane(), web], { stopPod: stopper.stopPod, logger: nullLogger });
    await vi.runAllTimersAsync();
    await done;
    const asked = stopper.calls.map((c) => [c.pod, c.askedAt - t0, c.grace]);
    // web has the ordinary group's 20 s; the critical group starts once web has exited, as the kubelet's next group.
    expect(asked[0]).toEqual(['web', 0, 20]);
    expect(
      asked
        .slice(1, 3)
        .map((a) => a[0])
        .sort(),
    ).toEqual(['kube-controller-manager', 'kube-scheduler']);
    expect(asked.slice(3).map((a) => a[0])).toEqual(['kube-apiserver', 'etcd']);
    expect(asked.slice(1, 3).map((a) => a[1])).toEqual([2_000, 2_000]);
  });
});
