// The names and moments the kubelet uses: CRI operation names, and when a pod counts as started.
import { describe, expect, it } from 'vitest';
import type { PodStatus } from 'kubernetes-types/core/v1';
import { PodStartTracker } from '../../../src/metrics/pod-start-tracker.js';
import { operationType } from '../../../src/cri/operation-type.js';
import type { PodStatusEntry } from '../../../src/status/status-manager.js';

describe('operationType', () => {
  it('names CRI calls as the kubelet instrumented runtime service does', () => {
    expect(operationType('RunPodSandbox')).toBe('run_podsandbox');
    expect(operationType('ListPodSandbox')).toBe('list_podsandbox');
    expect(operationType('PodSandboxStatus')).toBe('podsandbox_status');
    expect(operationType('CreateContainer')).toBe('create_container');
    expect(operationType('ExecSync')).toBe('exec_sync');
    expect(operationType('PullImage')).toBe('pull_image');
    expect(operationType('ImageFsInfo')).toBe('image_fs_info');
    expect(operationType('UpdateContainerResources')).toBe('update_container');
    expect(operationType('Version')).toBe('version');
  });
});

function entry(uid: string, seen: string, status: PodStatus, hostNetwork = true): PodStatusEntry {
  return {
    uid,
    key: `default/${uid}`,
    pod: {
      metadata: { name: uid, namespace: 'default', uid, annotations: { 'kubernetes.io/config.seen': seen } },
      spec: { hostNetwork, containers: [{ name: 'c', image: 'i' }] },
    },
    status,
  };
}

const pending: PodStatus = {
  phase: 'Pending',
  containerStatuses: [
    {
      name: 'c',
      image: 'i',
      imageID: '',
      ready: false,
      restartCount: 0,
      state: { waiting: { reason: 'ContainerCreating' } },
    },
  ],
};
const running: PodStatus = {
  phase: 'Running',
  containerStatuses: [
    {
      name: 'c',
      image: 'i',
      imageID: '',
      ready: true,
      restartCount: 0,
      state: { running: { startedAt: '2025-01-01T00:00:09Z' } },
    },
  ],
};

describe('PodStartTracker', () => {
  it('measures from config.seen to Running, and the SLI without image pulling', () => {
    const got: string[] = [];
    let now = Date.parse('2025-01-01T00:00:00Z');
    const t = new PodStartTracker(
      { podStarted: (s) => got.push(`start ${s}`), podStartedSli: (s, n) => got.push(`sli ${s} ${n}`) },
      () => now,
    );
    t.statusChanged('a', entry('a', '2025-01-01T00:00:00.000000000Z', pending));
    t.pulled('a', 4000, now + 6000);
    now += 10_000;
    t.statusChanged('a', entry('a', '2025-01-01T00:00:00.000000000Z', running));
    t.statusChanged('a', entry('a', '2025-01-01T00:00:00.000000000Z', running));
    expect(got).toEqual(['start 10', 'sli 6 false']);
  });

  it('does not count a pod that was already running when first seen (adopted), and labels the first pod with its own network', () => {
    const got: string[] = [];
    const t = new PodStartTracker(
      { podStarted: (s) => got.push(`start ${s}`), podStartedSli: (s, n) => got.push(`sli ${n}`) },
      () => Date.parse('2025-01-01T00:00:05Z'),
    );
    t.statusChanged('adopted', entry('adopted', '2025-01-01T00:00:00Z', running));
    t.statusChanged('n1', entry('n1', '2025-01-01T00:00:00Z', pending, false));
    t.statusChanged('n1', entry('n1', '2025-01-01T00:00:00Z', running, false));
    t.statusChanged('n2', entry('n2', '2025-01-01T00:00:00Z', pending, false));
    t.statusChanged('n2', entry('n2', '2025-01-01T00:00:00Z', running, false));
    expect(got).toEqual(['start 5', 'sli true', 'start 5', 'sli false']);
  });
});
