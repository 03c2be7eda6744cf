// Condition transition times kept across an agent restart: the status manager of a fresh agent has
// no status of its own for a pod, so (as the kubelet's, which falls back to the API's copy) it takes
// the times the API server showed for each condition whose status has not changed. Without that,
// every pod's first status after a restart differs from the API's copy only by new times: a patch
// per pod for nothing.
import { describe, expect, it } from 'vitest';
import type { PodCondition, PodStatus } from 'kubernetes-types/core/v1';
import { createLogger } from '../../../src/log/logger.js';
import { StatusManager } from '../../../src/status/status-manager.js';
import { ctr, iso, probes, runtimePod, sandbox, staticPod, T0, UID } from './fixtures.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
const pod = staticPod({ containers: [{ name: 'app', image: 'busybox:1.36' }] });
const BEFORE = iso(T0 - 3_600_000);

function manager(now: () => Date, of = pod): StatusManager {
  return new StatusManager({
    runtimePod: () => runtimePod([sandbox()], [ctr('c1', 'app')]),
    pods: () => [{ uid: UID, key: 'default/web-node1', state: 'Syncing', pod: of }],
    probes: probes(),
    nodeIP: '10.0.0.11',
    runtimeName: 'containerd',
    logger,
    now,
    settleMs: 50,
  });
}

const condition = (s: PodStatus | undefined, type: string): PodCondition | undefined =>
  s?.conditions?.find((c) => c.type === type);

/** What the API server held: every condition True an hour ago, but Initialized False. */
const reported: PodStatus = {
  phase: 'Running',
  conditions: [
    { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: BEFORE },
    { type: 'Initialized', status: 'False', lastTransitionTime: BEFORE },
    { type: 'Ready', status: 'True', lastTransitionTime: BEFORE },
    { type: 'ContainersReady', status: 'True', lastTransitionTime: BEFORE },
    { type: 'PodScheduled', status: 'True', lastTransitionTime: BEFORE },
  ],
};

describe('transition times after an agent restart', () => {
  it('take the reported time of a condition whose status is unchanged, and only those', async () => {
    let now = T0 + 60_000;
    const m = manager(() => new Date(now));
    m.update(UID);
    await m.idle();
    // Nothing reported yet: the agent's own time.
    expect(condition(m.get(UID)?.status, 'Ready')).toMatchObject({
      status: 'True',
      lastTransitionTime: iso(T0 + 60_000),
    });

    const source = m.podStatuses();
    await source.reported(UID, reported);
    const after = source.get(UID);
    for (const type of ['PodReadyToStartContainers', 'Ready', 'ContainersReady', 'PodScheduled'])
      expect(condition(after, type), type).toMatchObject({ status: 'True', lastTransitionTime: BEFORE });
    // A status that differs from what was reported is a transition since: its own time stays.
    expect(condition(after, 'Initialized')).toMatchObject({ status: 'True', lastTransitionTime: iso(T0 + 60_000) });

    // Later statuses carry the taken times on, and a second report changes nothing.
    now += 60_000;
    await source.reported(UID, { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0) }] });
    m.update(UID);
    await m.idle();
    expect(condition(source.get(UID), 'Ready')?.lastTransitionTime).toBe(BEFORE);
  });

  it('are taken at the first status when the report comes before it', async () => {
    const m = manager(() => new Date(T0 + 60_000));
    const source = m.podStatuses();
    await source.reported(UID, reported);
    m.update(UID);
    await m.idle();
    expect(condition(source.get(UID), 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: BEFORE });
  });

  it('of an API pod are taken from its object as first seen', async () => {
    const listed = {
      ...pod,
      metadata: { ...pod.metadata, annotations: { 'kubernetes.io/config.source': 'api' } },
      status: reported,
    };
    const m = manager(() => new Date(T0 + 60_000), listed);
    m.update(UID);
    await m.idle();
    expect(condition(m.get(UID)?.status, 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: BEFORE });
    expect(condition(m.get(UID)?.status, 'Initialized')?.lastTransitionTime).toBe(iso(T0 + 60_000));
  });
});
