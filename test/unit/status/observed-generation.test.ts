// Pod generation (KEP-5067, GA in 1.35), as the kubelet's status manager and generateAPIPodStatus
// write it: status.observedGeneration is the generation of the pod the status was made for, each
// condition the kubelet sets carries it too (advancing with the pod even where the condition's
// status and transition time stay), and a pod without a generation (a static pod) gets neither.
import { describe, expect, it } from 'vitest';
import type { PodCondition } from 'kubernetes-types/core/v1';
import { createLogger } from '../../../src/log/logger.js';
import type { StaticPod } from '../../../src/config/types.js';
import type { TerminationRequest } from '../../../src/podworkers/termination-request.js';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import { refusedPodStatus } from '../../../src/status/refused-status.js';
import { StatusManager, type PodWorkerView } from '../../../src/status/status-manager.js';
import type { ProbeState } from '../../../src/status/types.js';
import { ctr, exited, input, probes, runtimePod, sandbox, staticPod, T0, UID } from './fixtures.js';
import { PodSandboxState } from '../../../src/cri/cri-types.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
const OWNED = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];

/** An API pod as the server stored it, at a generation. */
function apiPod(generation: number, spec: Parameters<typeof staticPod>[0] = {}): StaticPod['pod'] {
  const p = staticPod(spec);
  return {
    ...p,
    metadata: { ...p.metadata, generation, annotations: { 'kubernetes.io/config.source': 'api' } },
  };
}

const generations = (cs: readonly PodCondition[] | undefined): Record<string, number | undefined> =>
  Object.fromEntries((cs ?? []).map((c) => [c.type, c.observedGeneration]));

describe('observedGeneration (KEP-5067)', () => {
  it('is the pod’s generation on the status and on every condition the kubelet sets', () => {
    const s = generatePodStatus(input({ pod: apiPod(3), runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) }));
    expect(s.observedGeneration).toBe(3);
    expect(generations(s.conditions)).toEqual(Object.fromEntries(OWNED.map((t) => [t, 3])));
  });

  it('is left out for a pod without a generation (a static pod: the kubelet writes 0, which the API omits)', () => {
    const s = generatePodStatus(input({ runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) }));
    expect('observedGeneration' in s).toBe(false);
    for (const c of s.conditions ?? []) expect('observedGeneration' in c).toBe(false);
  });

  it('is on the Failed status of a pod refused at admission', () => {
    expect(refusedPodStatus(apiPod(2), 'OutOfcpu', 'Pod was rejected: x').observedGeneration).toBe(2);
    expect('observedGeneration' in refusedPodStatus(staticPod(), 'OutOfcpu', 'x')).toBe(false);
  });

  it('follows a spec update: the conditions’ generation advances while their status and transition time stay', async () => {
    let view: PodWorkerView = { uid: UID, key: 'default/web-node1', state: 'Syncing', pod: apiPod(1) };
    let now = T0 + 60_000;
    const m = new StatusManager({
      runtimePod: () => runtimePod([sandbox()], [ctr('c1', 'app')]),
      pods: () => [view],
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      now: () => new Date(now),
    });
    m.update(UID);
    await m.idle();
    const first = m.get(UID)!.status;
    expect(first.observedGeneration).toBe(1);
    expect(generations(first.conditions)).toEqual(Object.fromEntries(OWNED.map((t) => [t, 1])));

    // activeDeadlineSeconds changed: generation 2, nothing else about the pod's state changed.
    view = { ...view, pod: apiPod(2, { activeDeadlineSeconds: 600 }) };
    now += 30_000;
    const seen: (number | undefined)[] = [];
    m.onChange((_uid, e) => seen.push(e?.status.observedGeneration));
    m.update(UID);
    await m.idle();
    const second = m.get(UID)!.status;
    expect(seen).toEqual([2]);
    expect(second.observedGeneration).toBe(2);
    expect(generations(second.conditions)).toEqual(Object.fromEntries(OWNED.map((t) => [t, 2])));
    for (const c of second.conditions ?? []) {
      const before = first.conditions?.find((p) => p.type === c.type);
      expect({ type: c.type, status: c.status, lastTransitionTime: c.lastTransitionTime }).toEqual({
        type: c.type,
        status: before?.status,
        lastTransitionTime: before?.lastTransitionTime,
      });
    }
  });

  it('a readiness change is written with the pod’s current generation', async () => {
    let ready = false;
    const probeState: ProbeState = { ready: () => ready, started: () => undefined };
    let view: PodWorkerView = {
      uid: UID,
      key: 'default/web-node1',
      state: 'Syncing',
      pod: apiPod(4, {
        containers: [{ name: 'app', image: 'busybox:1.36', readinessProbe: { exec: { command: ['true'] } } }],
      }),
    };
    const m = new StatusManager({
      runtimePod: () => runtimePod([sandbox()], [ctr('c1', 'app')]),
      pods: () => [view],
      probes: probeState,
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      now: () => new Date(T0 + 60_000),
    });
    m.update(UID);
    await m.idle();
    expect(m.get(UID)!.status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      observedGeneration: 4,
    });
    ready = true;
    view = { ...view, pod: { ...view.pod!, metadata: { ...view.pod!.metadata, generation: 5 } } };
    m.update(UID);
    await m.idle();
    const conditions = m.get(UID)!.status.conditions;
    expect(conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', observedGeneration: 5 });
    expect(conditions?.find((c) => c.type === 'ContainersReady')).toMatchObject({
      status: 'True',
      observedGeneration: 5,
    });
  });

  it('the DisruptionTarget the kubelet sets on a pod it stops carries the pod’s generation', async () => {
    const shutdown: TerminationRequest = {
      reason: 'node-shutdown',
      graceSeconds: 7,
      status: { reason: 'Terminated', message: 'Pod was terminated in response to imminent node shutdown.' },
    };
    const m = new StatusManager({
      runtimePod: () =>
        runtimePod([sandbox('s1', { state: PodSandboxState.SANDBOX_NOTREADY })], [exited('c1', 'app', 137)]),
      pods: () => [{ uid: UID, key: 'default/web-node1', state: 'Terminated', pod: apiPod(7), termination: shutdown }],
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      now: () => new Date(T0 + 60_000),
    });
    m.update(UID);
    await m.idle();
    const s = m.get(UID)!.status;
    expect(s.phase).toBe('Failed');
    expect(s.observedGeneration).toBe(7);
    expect(s.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      observedGeneration: 7,
    });
  });
});
