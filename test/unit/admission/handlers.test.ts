// The admit handlers before and after the predicate one: the eviction manager's (node pressure),
// the sysctl allowlist's, the node shutdown manager's, in the kubelet's order and words.
import { describe, expect, it } from 'vitest';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { sysctlAllowlist } from '../../../src/admission/sysctls.js';
import { safeSysctls } from '../../../src/k8s/sysctls.js';
import { node, pod } from './pods.js';

const withSysctls = (name: string, sysctls: string[], spec: object = {}) =>
  pod(name, { spec: { securityContext: { sysctls: sysctls.map((n) => ({ name: n, value: '1' })) }, ...spec } });

describe('sysctl admit handler', () => {
  it('admits the safe sysctls, refuses an unsafe one not allowed (SysctlForbidden)', () => {
    expect(
      canAdmitPod(withSysctls('a', ['net.ipv4.ip_local_port_range', 'kernel.shm_rmid_forced']), [], node()).admit,
    ).toBe(true);
    expect(canAdmitPod(withSysctls('b', ['kernel.msgmax']), [], node())).toEqual({
      admit: false,
      reason: 'SysctlForbidden',
      message: 'forbidden sysctl: "kernel.msgmax" not allowlisted',
    });
  });

  it('admits an unsafe sysctl allowedUnsafeSysctls names or covers with a prefix, in either spelling', () => {
    const allowed = node({ sysctls: sysctlAllowlist([...safeSysctls('6.1'), 'kernel.msg*', 'net.core.somaxconn']) });
    expect(canAdmitPod(withSysctls('a', ['kernel.msgmax', 'net/core/somaxconn']), [], allowed).admit).toBe(true);
    expect(canAdmitPod(withSysctls('b', ['kernel.sem']), [], allowed)).toMatchObject({
      reason: 'SysctlForbidden',
      message: 'forbidden sysctl: "kernel.sem" not allowlisted',
    });
  });

  it('refuses a net sysctl to a hostNetwork pod and an IPC one to a hostIPC pod, even safe ones', () => {
    expect(canAdmitPod(withSysctls('a', ['net.ipv4.tcp_syncookies'], { hostNetwork: true }), [], node())).toEqual({
      admit: false,
      reason: 'SysctlForbidden',
      message: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled',
    });
    expect(canAdmitPod(withSysctls('b', ['kernel.shm_rmid_forced'], { hostIPC: true }), [], node())).toMatchObject({
      message: 'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled',
    });
    expect(canAdmitPod(withSysctls('c', ['kernel.shm_rmid_forced'], { hostNetwork: true }), [], node()).admit).toBe(
      true,
    );
  });

  it('refuses a static (critical) pod too, before any resource check', () => {
    const p = withSysctls('a', ['kernel.msgmax']);
    p.metadata!.annotations = { 'kubernetes.io/config.source': 'file' };
    expect(
      canAdmitPod(p, [pod('x'), pod('y')], node({ allocatable: { ...node().allocatable, pods: 1 } })),
    ).toMatchObject({ reason: 'SysctlForbidden' });
  });
});

describe('eviction admit handler', () => {
  const be = () => pod('be');
  const burstable = () => pod('bu', { requests: { cpu: '100m' } });

  it('under memory pressure refuses a BestEffort pod (Evicted), admits a Burstable one and one tolerating the taint', () => {
    const n = node({ pressure: ['MemoryPressure'] });
    expect(canAdmitPod(be(), [], n)).toEqual({
      admit: false,
      reason: 'Evicted',
      message: 'The node had condition: [MemoryPressure]. ',
    });
    expect(canAdmitPod(burstable(), [], n).admit).toBe(true);
    const tolerant = pod('t', {
      spec: { tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] },
    });
    expect(canAdmitPod(tolerant, [], n).admit).toBe(true);
  });

  it('under disk pressure refuses every pod that is not critical; a static pod is admitted', () => {
    const n = node({ pressure: ['MemoryPressure', 'DiskPressure'] });
    expect(canAdmitPod(burstable(), [], n)).toEqual({
      admit: false,
      reason: 'Evicted',
      message: 'The node had condition: [MemoryPressure DiskPressure]. ',
    });
    expect(canAdmitPod(pod('s', { static: true }), [], n).admit).toBe(true);
  });

  it('comes before the sysctl and predicate handlers', () => {
    const p = withSysctls('a', ['kernel.msgmax'], { nodeSelector: { disk: 'hdd' } });
    expect(canAdmitPod(p, [], node({ pressure: ['DiskPressure'] }))).toMatchObject({ reason: 'Evicted' });
    expect(canAdmitPod(p, [], node())).toMatchObject({ reason: 'SysctlForbidden' });
  });
});

describe('node shutdown admit handler', () => {
  it('refuses every pod, critical ones too, while the node shuts down, after the predicate handler', () => {
    const n = node({ shuttingDown: true });
    const refusal = { admit: false, reason: 'NodeShutdown', message: 'Pod was rejected as the node is shutting down.' };
    expect(canAdmitPod(pod('a'), [], n)).toEqual(refusal);
    expect(canAdmitPod(pod('s', { static: true }), [], n)).toEqual(refusal);
    expect(canAdmitPod(pod('b', { spec: { nodeSelector: { disk: 'hdd' } } }), [], n)).toMatchObject({
      reason: 'NodeAffinity',
    });
  });

  it('a critical pod that would preempt is refused instead, and evicts nothing', () => {
    const one = { ...node().allocatable, pods: 1 };
    expect(canAdmitPod(pod('s', { static: true }), [pod('web')], node({ allocatable: one })).admit).toBe(true);
    expect(
      canAdmitPod(pod('s', { static: true }), [pod('web')], node({ allocatable: one, shuttingDown: true })),
    ).toMatchObject({ admit: false, reason: 'NodeShutdown' });
  });
});
