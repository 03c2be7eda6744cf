// status.ephemeralContainerStatuses: an ephemeral container is reported there, and neither its
// running nor its exit changes the pod's phase or readiness.
import { describe, expect, it } from 'vitest';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import { ctr, exited, input, iso, runtimePod, sandbox, staticPod, T0 } from './fixtures.js';

const withDebugger = () =>
  staticPod({ ephemeralContainers: [{ name: 'debugger', image: 'busybox:1.36', targetContainerName: 'app' }] });

describe('ephemeralContainerStatuses', () => {
  it('has none for a pod without ephemeral containers', () => {
    expect(
      generatePodStatus(input({ runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) })).ephemeralContainerStatuses,
    ).toBeUndefined();
  });

  it('reports a running ephemeral container apart from the app containers, never ready', () => {
    const s = generatePodStatus(
      input({
        pod: withDebugger(),
        runtime: runtimePod([sandbox()], [ctr('c1', 'app'), ctr('e1', 'debugger', { type: 'ephemeral' })]),
      }),
    );
    expect(s.containerStatuses?.map((c) => c.name)).toEqual(['app']);
    expect(s.ephemeralContainerStatuses).toEqual([
      expect.objectContaining({
        name: 'debugger',
        containerID: 'containerd://e1',
        ready: false,
        restartCount: 0,
        state: { running: { startedAt: iso(T0 + 3000) } },
      }),
    ]);
    expect(s.phase).toBe('Running');
    expect(s.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('waits as ContainerCreating before it exists, and shows why it cannot start', () => {
    const pod = withDebugger();
    const s = generatePodStatus(input({ pod, runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) }));
    expect(s.ephemeralContainerStatuses?.[0]?.state).toEqual({ waiting: { reason: 'ContainerCreating' } });
    const waiting = new Map([
      ['debugger', { reason: 'CreateContainerConfigError', message: 'unable to find target container app' }],
    ]);
    const held = generatePodStatus(input({ pod, waiting, runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) }));
    expect(held.ephemeralContainerStatuses?.[0]?.state).toEqual({
      waiting: { reason: 'CreateContainerConfigError', message: 'unable to find target container app' },
    });
  });

  it('leaves the pod Running and Ready once the ephemeral container exited', () => {
    const s = generatePodStatus(
      input({
        pod: withDebugger(),
        runtime: runtimePod([sandbox()], [ctr('c1', 'app'), exited('e1', 'debugger', 1, { type: 'ephemeral' })]),
      }),
    );
    expect(s.ephemeralContainerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(s.phase).toBe('Running');
    expect(s.conditions?.find((c) => c.type === 'ContainersReady')?.status).toBe('True');
  });
});
