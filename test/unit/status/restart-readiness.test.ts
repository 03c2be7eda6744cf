// Readiness kept across an agent restart (KEP-4781, the kubelet of 1.35 and later with
// ChangeContainerStatusOnKubeletRestart off): while the probe of a container found running at the
// agent's start has no result, its `ready` and `started` are what was reported for that very
// container before; a replaced container, or one never reported, starts from the probe's rules.
import { describe, expect, it } from 'vitest';
import type { PodStatus } from 'kubernetes-types/core/v1';
import { createLogger } from '../../../src/log/logger.js';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import { StatusManager } from '../../../src/status/status-manager.js';
import type { ProbeState } from '../../../src/status/types.js';
import { ctr, input, runtimePod, sandbox, staticPod, T0, UID } from './fixtures.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });

const probed = staticPod({
  containers: [
    {
      name: 'app',
      image: 'busybox:1.36',
      startupProbe: { exec: { command: ['true'] } },
      readinessProbe: { exec: { command: ['true'] } },
    },
  ],
});
/** Neither probe has answered for the container yet. */
const unanswered: ProbeState = { ready: () => undefined, started: () => undefined };

function reported(containerID: string, ready: boolean, started = true): PodStatus {
  return {
    phase: 'Running',
    containerStatuses: [{ name: 'app', containerID, ready, started, image: 'x', imageID: 'y', restartCount: 0 }],
  };
}

const readyCondition = (s: PodStatus) => s.conditions?.find((c) => c.type === 'Ready')?.status;

describe('readiness of a container found running at the agent’s start', () => {
  it('is what was reported for the same container until its probes answer', () => {
    const s = generatePodStatus(
      input({
        pod: probed,
        probes: unanswered,
        runtime: runtimePod([sandbox()], [ctr('c1', 'app')]),
        reported: reported('containerd://c1', true),
      }),
    );
    expect(s.containerStatuses?.[0]).toMatchObject({ ready: true, started: true });
    expect(readyCondition(s)).toBe('True');
  });

  it('is not taken from another container (one replaced meanwhile)', () => {
    const s = generatePodStatus(
      input({
        pod: probed,
        probes: unanswered,
        runtime: runtimePod([sandbox()], [ctr('c2', 'app')]),
        reported: reported('containerd://c1', true),
      }),
    );
    expect(s.containerStatuses?.[0]).toMatchObject({ ready: false, started: false });
    expect(readyCondition(s)).toBe('False');
  });

  it('stays not ready where it was reported not ready, and is not ready with nothing reported', () => {
    const runtime = runtimePod([sandbox()], [ctr('c1', 'app')]);
    const notReady = generatePodStatus(
      input({ pod: probed, probes: unanswered, runtime, reported: reported('containerd://c1', false) }),
    );
    expect(notReady.containerStatuses?.[0]).toMatchObject({ ready: false, started: true });
    const none = generatePodStatus(input({ pod: probed, probes: unanswered, runtime }));
    expect(none.containerStatuses?.[0]).toMatchObject({ ready: false, started: false });
  });

  it('follows the probe once it answers', () => {
    const s = generatePodStatus(
      input({
        pod: probed,
        probes: { ready: () => false, started: () => true },
        runtime: runtimePod([sandbox()], [ctr('c1', 'app')]),
        reported: reported('containerd://c1', true),
      }),
    );
    expect(s.containerStatuses?.[0]).toMatchObject({ ready: false, started: true });
  });

  it('the status manager recomputes with a mirror’s status when the API side first sees it, and keeps only the first', async () => {
    const m = new StatusManager({
      runtimePod: () => runtimePod([sandbox()], [ctr('c1', 'app')]),
      pods: () => [{ uid: UID, key: 'default/web-node1', state: 'Syncing', pod: probed }],
      probes: unanswered,
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      now: () => new Date(T0 + 60_000),
      settleMs: 50,
    });
    m.update(UID);
    await m.idle();
    // The API server was not reachable yet: nothing says the container was ready.
    expect(readyCondition(m.get(UID)!.status)).toBe('False');
    const source = m.podStatuses();
    await source.reported(UID, reported('containerd://c1', true));
    // Resolved only once the status to send shows it.
    expect(readyCondition(source.get(UID)!)).toBe('True');
    await source.reported(UID, reported('containerd://c1', false));
    m.update(UID);
    await m.idle();
    expect(readyCondition(source.get(UID)!)).toBe('True');
  });
});
