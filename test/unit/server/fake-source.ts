// A ServerSource over statuses computed from fixtures, for the server and `bootlet pods` tests.
import type { ServerSource } from '../../../src/server/source.js';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import type { PodStatusEntry } from '../../../src/status/status-manager.js';
import { ctr, exited, input, runtimePod, sandbox, staticPod, T0, UID } from '../status/fixtures.js';

export function runningEntry(): PodStatusEntry {
  const i = input({
    runtime: runtimePod([sandbox()], [ctr('c1', 'app'), exited('c0', 'app', 1, { createdAt: 1, restartCount: 0 })]),
  });
  return { uid: UID, key: 'default/web-node1', pod: i.pod, status: generatePodStatus(i), runtime: i.runtime };
}

export function pendingEntry(): PodStatusEntry {
  const pod = staticPod();
  const p = {
    ...pod,
    metadata: { ...pod.metadata, name: 'etcd-node1', namespace: 'kube-system', uid: 'f'.repeat(32) },
  };
  const i = input({ pod: p });
  return {
    uid: p.metadata.uid,
    key: 'kube-system/etcd-node1',
    pod: p,
    status: generatePodStatus(i),
    terminatingSince: new Date(T0 + 30_000),
  };
}

export class FakeSource implements ServerSource {
  entries: PodStatusEntry[] = [];
  relistAgoMs = 1_000;
  unexpectedErrors?: () => number;
  statuses(): readonly PodStatusEntry[] {
    return this.entries;
  }
  sinceLastRelistMs(): number {
    return this.relistAgoMs;
  }
}
