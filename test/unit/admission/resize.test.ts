// A pod's resize judged at admission, from the kubelet's own table (allocation_manager_test.go's
// TestHandlePodResourcesResize: a node of 4 cpus and 4Gi, the resized pod and two others of 1 cpu and
// 1Gi each), each case for a regular container and for a sidecar; then a deferred resize allocated
// once another pod leaves, and the allocation each pod runs with.
import type { Container } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { PodAdmission } from '../../../src/admission/pod-admission.js';
import { PodAllocations } from '../../../src/admission/pod-allocations.js';
import type { PodUpdate, StaticPod } from '../../../src/config/types.js';
import { nullLogger } from '../../../src/log/logger.js';
import { GiB, node, pod } from './pods.js';

type List = Record<string, string>;

function apiPod(
  name: string,
  requests: List,
  opts: { sidecar?: boolean; static?: boolean; generation?: number } = {},
): StaticPod {
  const c: Container = { name: 'c1', image: 'i1', resources: { requests } };
  const base = pod(name, {
    static: opts.static,
    containers: opts.sidecar ? [{ name: 'main', image: 'i1' }] : [c],
    spec: opts.sidecar ? { initContainers: [{ ...c, restartPolicy: 'Always' }] } : {},
  }) as StaticPod['pod'];
  if (!opts.static) base.metadata.annotations['kubernetes.io/config.source'] = 'api';
  const withGeneration: StaticPod['pod'] =
    opts.generation === undefined ? base : { ...base, metadata: { ...base.metadata, generation: opts.generation } };
  return { pod: withGeneration, uid: base.metadata.uid, key: `default/${name}`, file: `api:${name}`, uidPinned: true };
}

function setup() {
  const allocations = new PodAllocations();
  const applied: string[] = [];
  const changed: string[] = [];
  const a = new PodAdmission({
    node: () => node({ allocatable: { milliCPU: 4000, memory: 4 * GiB, ephemeralStorage: 10 * GiB, pods: 110 } }),
    apply: (u: PodUpdate) => void applied.push(`${u.op} ${u.pod.uid}`),
    stop: () => undefined,
    isTerminal: () => false,
    refused: () => undefined,
    terminal: () => undefined,
    forgotten: () => undefined,
    stopped: async () => undefined,
    allocations,
    resizeChanged: (uid) => void changed.push(uid),
    logger: nullLogger,
  });
  a.startAdmitting(() => false);
  return { a, allocations, applied, changed };
}

const CASES: { name: string; to: List; pending?: { reason: string; message: string } }[] = [
  { name: 'Request CPU and memory decrease - expect InProgress', to: { cpu: '500m', memory: '500Mi' } },
  { name: 'Request CPU increase, memory decrease - expect InProgress', to: { cpu: '1500m', memory: '500Mi' } },
  { name: 'Request CPU decrease, memory increase - expect InProgress', to: { cpu: '500m', memory: '1500Mi' } },
  {
    name: 'Request CPU and memory increase beyond current capacity - expect Deferred',
    to: { cpu: '2500m', memory: '2500Mi' },
    pending: { reason: 'Deferred', message: "Node didn't have enough resource: cpu" },
  },
  {
    name: 'Request CPU decrease and memory increase beyond current capacity - expect Deferred',
    to: { cpu: '500m', memory: '2500Mi' },
    pending: { reason: 'Deferred', message: "Node didn't have enough resource: memory" },
  },
  {
    name: 'Request memory increase beyond node capacity - expect Infeasible',
    to: { cpu: '1', memory: '4500Mi' },
    pending: {
      reason: 'Infeasible',
      message: "Node didn't have enough capacity: memory, requested: 4718592000, capacity: 4294967296",
    },
  },
  {
    name: 'Request CPU increase beyond node capacity - expect Infeasible',
    to: { cpu: '5000m', memory: '1Gi' },
    pending: {
      reason: 'Infeasible',
      message: "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000",
    },
  },
  { name: 'Increase CPU from min shares', to: { cpu: '1000m', memory: '1Gi' } },
];

describe('resize admission (the kubelet’s TestHandlePodResourcesResize)', () => {
  for (const sidecar of [false, true])
    for (const tc of CASES)
      it(`${tc.name} (sidecar=${sidecar})`, () => {
        const { a, allocations } = setup();
        const original = apiPod('pod1', { cpu: '1', memory: '1Gi' }, { sidecar, generation: 1 });
        a.update({ op: 'ADD', pod: original });
        a.update({ op: 'ADD', pod: apiPod('pod2', { cpu: '1', memory: '1Gi' }) });
        a.update({ op: 'ADD', pod: apiPod('pod3', { cpu: '1', memory: '1Gi' }) });
        const resized = apiPod('pod1', tc.to, { sidecar, generation: 2 });
        a.update({ op: 'UPDATE', pod: resized, previous: original });
        const pending = allocations.pending('uid-pod1');
        const ran = allocations.allocatedPod(resized.pod);
        const requests = (sidecar ? ran.spec?.initContainers?.[0] : ran.spec?.containers[0])?.resources?.requests;
        if (!tc.pending) {
          expect(pending).toBeUndefined();
          expect(requests).toEqual(tc.to);
        } else {
          expect(pending).toMatchObject({ reason: tc.pending.reason, generation: 2 });
          expect(pending?.message).toContain(tc.pending.message);
          expect(requests).toEqual({ cpu: '1', memory: '1Gi' });
        }
      });

  it('No resize: no allocation is recorded, nothing is pending', () => {
    const { a, allocations, changed } = setup();
    const p = apiPod('pod1', { cpu: '1', memory: '1Gi' });
    a.update({ op: 'ADD', pod: p });
    a.update({ op: 'UPDATE', pod: apiPod('pod1', { cpu: '1', memory: '1Gi' }), previous: p });
    expect(allocations.has('uid-pod1')).toBe(false);
    expect(changed).toEqual([]);
  });

  it('static pod, expect Infeasible', () => {
    const { a, allocations } = setup();
    const p = apiPod('pod1', { cpu: '1', memory: '1Gi' }, { static: true });
    a.update({ op: 'ADD', pod: p });
    a.update({ op: 'UPDATE', pod: apiPod('pod1', { cpu: '500m', memory: '500Mi' }, { static: true }), previous: p });
    expect(allocations.pending('uid-pod1')).toMatchObject({
      reason: 'Infeasible',
      message: 'In-place resize of static-pods is not supported',
    });
  });

  it('a deferred resize is allocated, and handed to its worker, once another pod leaves; other pods count with their allocations', () => {
    const { a, allocations, applied } = setup();
    const p1 = apiPod('pod1', { cpu: '1', memory: '1Gi' });
    const p2 = apiPod('pod2', { cpu: '1', memory: '1Gi' });
    a.update({ op: 'ADD', pod: p1 });
    a.update({ op: 'ADD', pod: p2 });
    const big = apiPod('pod1', { cpu: '3500m', memory: '1Gi' });
    a.update({ op: 'UPDATE', pod: big, previous: p1 });
    expect(allocations.pending('uid-pod1')?.reason).toBe('Deferred');
    // pod2 asks for room too: measured against pod1's allocation (1 cpu), not its spec (3.5).
    const p2more = apiPod('pod2', { cpu: '2', memory: '1Gi' });
    a.update({ op: 'UPDATE', pod: p2more, previous: p2 });
    expect(allocations.pending('uid-pod2')).toBeUndefined();
    applied.length = 0;
    a.update({ op: 'REMOVE', pod: p2more });
    expect(allocations.pending('uid-pod1')).toBeUndefined();
    expect(allocations.allocatedPod(big.pod).spec?.containers[0]?.resources?.requests?.cpu).toBe('3500m');
    expect(applied).toEqual(['REMOVE uid-pod2', 'UPDATE uid-pod1']);
  });
});
