import { describe, expect, it } from 'vitest';
import {
  insufficientMessage,
  insufficientReason,
  insufficientResources,
} from '../../../src/admission/fits-resources.js';
import { podRequests } from '../../../src/admission/pod-requests.js';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { GiB, node, pod } from './pods.js';

describe('noderesources fit', () => {
  it('refuses the pod past maxPods with OutOfpods and the kubelet message', () => {
    const others = [pod('a'), pod('b'), pod('c')];
    const d = canAdmitPod(pod('d'), others, node({ allocatable: { ...node().allocatable, pods: 3 } }));
    expect(d).toEqual({
      admit: false,
      reason: 'OutOfpods',
      message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
    });
    expect(
      canAdmitPod(pod('d'), others.slice(0, 2), node({ allocatable: { ...node().allocatable, pods: 3 } })).admit,
    ).toBe(true);
  });

  it('refuses cpu in milli-cores against what the others request (OutOfcpu)', () => {
    const d = canAdmitPod(pod('b', { requests: { cpu: '1500m' } }), [pod('a', { requests: { cpu: '1' } })], node());
    expect(d).toEqual({
      admit: false,
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000",
    });
    expect(
      canAdmitPod(pod('b', { requests: { cpu: '1' } }), [pod('a', { requests: { cpu: '1' } })], node()).admit,
    ).toBe(true);
  });

  it('refuses memory in bytes (OutOfmemory)', () => {
    const d = canAdmitPod(pod('a', { requests: { memory: '5Gi' } }), [], node());
    expect(d).toEqual({
      admit: false,
      reason: 'OutOfmemory',
      message: `Node didn't have enough resource: memory, requested: ${5 * GiB}, used: 0, capacity: ${4 * GiB}`,
    });
  });

  it('refuses ephemeral-storage (OutOfephemeral-storage)', () => {
    const d = canAdmitPod(pod('a', { requests: { 'ephemeral-storage': '11Gi' } }), [], node());
    expect(d).toMatchObject({ admit: false, reason: 'OutOfephemeral-storage' });
  });

  it('reports every lacking resource, pods first, and names each reason as the kubelet does', () => {
    const lacking = insufficientResources(pod('b', { requests: { cpu: '3', memory: '5Gi' } }), [pod('a')], {
      milliCPU: 2000,
      memory: 4 * GiB,
      ephemeralStorage: 0,
      pods: 1,
    });
    expect(lacking.map(insufficientReason)).toEqual(['OutOfpods', 'OutOfcpu', 'OutOfmemory']);
    expect(insufficientMessage(lacking[1]!)).toBe(
      "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000",
    );
  });

  it('a pod that requests nothing needs only a pod slot', () => {
    expect(insufficientResources(pod('a'), [], { milliCPU: 0, memory: 0, ephemeralStorage: 0, pods: 1 })).toEqual([]);
  });

  it('counts the largest init container, sidecars beside it, and the overhead', () => {
    const p = pod('a', {
      containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m', memory: '100' } } }],
      spec: {
        initContainers: [
          { name: 'side', image: 'i', restartPolicy: 'Always', resources: { requests: { cpu: '50m' } } },
          { name: 'big', image: 'i', resources: { requests: { cpu: '500m', memory: '10' } } },
        ],
        overhead: { cpu: '10m' },
      },
    });
    // init peak: 50m + 500m = 550m > 100m + 50m; memory: max(100, 10) = 100.
    expect(podRequests(p)).toEqual({ milliCPU: 560, memory: 100, ephemeralStorage: 0 });
  });

  it('a negative request counts as nothing: it makes no room for others', () => {
    const greedy = pod('neg', {
      containers: [
        { name: 'a', image: 'i', resources: { requests: { memory: '-1000Gi', cpu: '-5' } } },
        { name: 'b', image: 'i', resources: { requests: { memory: '1Gi' } } },
      ],
    });
    expect(podRequests(greedy)).toEqual({ milliCPU: 0, memory: GiB, ephemeralStorage: 0 });
    const d = canAdmitPod(pod('b', { requests: { memory: '3500Mi' } }), [greedy], node());
    expect(d).toMatchObject({ admit: false, reason: 'OutOfmemory' });
  });
});
