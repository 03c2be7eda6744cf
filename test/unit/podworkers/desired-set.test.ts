// A worker reads its pod from the one desired set while the set holds its UID, and keeps the pod
// it was last given once the set no longer does (it is being stopped with that pod's grace period).
import { describe, expect, it } from 'vitest';
import { PodConfig } from '../../../src/config/pod-config/pod-config.js';
import type { StaticPod } from '../../../src/config/types.js';
import { nullLogger } from '../../../src/log/logger.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import { waitFor } from '../../support/wait.js';
import { FakePodRuntime } from './fake-pod-runtime.js';

function staticPod(name: string, uid: string, image = 'img'): StaticPod {
  return {
    uid,
    key: `default/${name}`,
    file: `/m/${name}.yaml`,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid, annotations: { 'kubernetes.io/config.hash': uid } },
      spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image }] },
    },
  };
}

describe('PodWorkers with the desired pod set', () => {
  it('reads each pod from the set, and keeps the last one once it has left the set', async () => {
    const runtime = new FakePodRuntime();
    const config = new PodConfig({ sources: ['file'], logger: nullLogger });
    const workers = new PodWorkers({ runtime, cache: runtime.cache, logger: nullLogger, syncFrequencyMs: 60_000, desired: config });
    config.subscribe((u) => workers.apply(u));
    workers.adoptRuntimePods(new Map());
    const feed = config.feed('file');
    const v1 = staticPod('a', 'pinned');
    feed.update({ op: 'ADD', pod: v1 });
    expect(workers.snapshot()[0]?.pod).toBe(v1.pod);
    // A pinned UID edited in place: same UID, new content, read from the set.
    const v2 = staticPod('a', 'pinned', 'img2');
    feed.update({ op: 'UPDATE', pod: v2, previous: v1 });
    expect(config.podByUid('pinned')).toBe(v2);
    expect(workers.snapshot()[0]?.pod).toBe(v2.pod);
    await waitFor(() => runtime.journal.some((l) => l.startsWith('start a')), { timeoutMs: 5000, what: 'a started' });
    feed.update({ op: 'REMOVE', pod: v2 });
    expect(config.podByUid('pinned')).toBeUndefined();
    const stopping = workers.snapshot().find((w) => w.uid === 'pinned');
    expect(stopping?.pod).toBe(v2.pod);
    await waitFor(() => !workers.has('pinned'), { timeoutMs: 5000, what: 'a stopped' });
  });
});
