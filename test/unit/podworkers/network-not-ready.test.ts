// While the runtime's network is not ready, the workers start host-network pods only, as the
// kubelet's SyncPod does; the others wait with the kubelet's error and event, and start once it is.
import { describe, expect, it } from 'vitest';
import type { StaticPod } from '../../../src/config/types.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import type { PodEvent } from '../../../src/podworkers/observer.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { waitFor } from '../../support/wait.js';
import { FakePodRuntime } from './fake-pod-runtime.js';

function pod(name: string, hostNetwork: boolean): StaticPod {
  const uid = `uid-${name}`;
  return {
    uid,
    key: `default/${name}`,
    file: `/m/${name}.yaml`,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid, annotations: { 'kubernetes.io/config.hash': uid } },
      spec: {
        hostNetwork,
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: 'img' }],
      },
    },
  };
}

const WAIT = { timeoutMs: 20_000, intervalMs: 20 };
const NOT_READY =
  'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized';

describe('pod workers while the runtime network is not ready', () => {
  it("start host-network pods, hold the others with the kubelet's error and one event, and start them once the network is ready", async () => {
    const runtime = new FakePodRuntime();
    const { logger, lines } = memoryLogger(2);
    let network: string | undefined = NOT_READY;
    const events: PodEvent[] = [];
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger,
      syncFrequencyMs: 60_000,
      network: { networkNotReady: () => network },
      observers: [{ podEvent: (e) => events.push(e) }],
    });
    workers.start(() => false);
    workers.apply({ op: 'ADD', pod: pod('host', true) });
    workers.apply({ op: 'ADD', pod: pod('dns', false) });
    const running = (uid: string) =>
      runtime.pods.get(uid)?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING) === true;
    await waitFor(() => running('uid-host'), { ...WAIT, what: 'the host-network pod running' });
    // Held: nothing is made for it in the runtime.
    await waitFor(
      () =>
        lines.filter((l) => l.includes('uid-dns')).length > 0 &&
        workers.snapshotOf('uid-dns')?.lastSync?.error !== undefined,
      { ...WAIT, what: 'dns held' },
    );
    expect(runtime.journal.some((l) => l.includes('uid-dns'))).toBe(false);
    expect(workers.snapshotOf('uid-dns')?.lastSync?.error).toBe(`network is not ready: ${NOT_READY}`);
    const held = events.filter((e) => e.uid === 'uid-dns');
    expect(held).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'NetworkNotReady',
        message: `network is not ready: ${NOT_READY}`,
      }),
    ]);
    network = undefined;
    await waitFor(() => running('uid-dns'), { ...WAIT, what: 'the pod-network pod running once the network is ready' });
    expect(events.filter((e) => e.uid === 'uid-dns' && e.reason === 'NetworkNotReady')).toHaveLength(1);
    workers.shutdown();
  });
});
