import { describe, expect, it } from 'vitest';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { podsToPreempt } from '../../../src/admission/preemption.js';
import { node, pod } from './pods.js';

const three = node({ allocatable: { ...node().allocatable, pods: 3 } });

describe('critical pod admission handler', () => {
  it('a static pod over maxPods with only critical pods admitted is refused as the kubelet refuses it', () => {
    const others = [pod('a', { static: true }), pod('b', { static: true }), pod('c', { static: true })];
    expect(canAdmitPod(pod('d', { static: true }), others, three)).toEqual({
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message:
        'Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: pods, q: 1), ]',
    });
  });

  it('a non-critical pod over maxPods is refused with OutOfpods, it never preempts', () => {
    const others = [pod('a'), pod('b'), pod('c')];
    expect(canAdmitPod(pod('d'), others, three)).toMatchObject({ admit: false, reason: 'OutOfpods' });
  });

  it('a static pod evicts a non-critical pod, never a critical one', () => {
    const d = canAdmitPod(
      pod('d', { static: true }),
      [pod('a', { static: true }), pod('b'), pod('c', { static: true })],
      three,
    );
    expect(d.admit).toBe(true);
    expect(d.admit && d.preempt.map((p) => p.metadata?.name)).toEqual(['b']);
  });

  it('takes BestEffort before Burstable before Guaranteed, and the closest pod within a class', () => {
    const be = pod('be');
    const small = pod('small', { requests: { cpu: '100m' } });
    const big = pod('big', { requests: { cpu: '900m' } });
    const guaranteed = pod('g', { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });
    const lacking = [{ resourceName: 'cpu' as const, requested: 800, used: 2000, capacity: 2000 }];
    const r = podsToPreempt(pod('x', { static: true }), [guaranteed, be, small, big], lacking);
    expect('victims' in r && r.victims.map((p) => p.metadata?.name)).toEqual(['big']);
    const pods = podsToPreempt(
      pod('x', { static: true }),
      [guaranteed, be, small],
      [{ resourceName: 'pods', requested: 1, used: 3, capacity: 3 }],
    );
    expect('victims' in pods && pods.victims.map((p) => p.metadata?.name)).toEqual(['be']);
  });

  it('a critical pod refused for a host port as well is refused for that, nothing is evicted', () => {
    const port = (n: string, critical: boolean) =>
      pod(n, {
        static: critical,
        containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 1, hostPort: 9000 }] }],
      });
    expect(canAdmitPod(port('d', true), [port('a', false), pod('b'), pod('c')], three)).toMatchObject({
      admit: false,
      reason: 'NodePorts',
    });
  });
});
