// A static pod with an image volume on containerd 1.6, whose CRI drops Mount.image (the container
// would run without its volume): refused at admission, Failed with PodFeatureUnsupported naming
// ImageVolume and the field, never run (a bootlet before 1.31's fields decoded the manifest without
// the volume and ran it with an emptyDir in its place); the pod beside it runs on.
// image-volumes.test.ts is the pod running on containerd 2.1.
import type { Pod } from 'kubernetes-types/core/v1';
import { beforeAll, describe, expect, it } from 'vitest';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { TEST_IMAGES } from '../../../dev/images.js';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import type { RunningAgent } from '../../support/agent.js';
import { freePort } from '../../support/ports.js';
import { readOnlyPods } from '../../support/read-only-pods.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-imgvol-16';
const h = useAgentHarness('image-volumes-refused', NODE, {}, () => ({ version: '1.6' }));
let agent: RunningAgent;
let readOnlyPort: number;

async function apiView(name: string): Promise<Pod | undefined> {
  return (await readOnlyPods(readOnlyPort)).items.find((p) => p.metadata?.name === `${name}-${NODE}`);
}

beforeAll(async () => {
  readOnlyPort = await freePort();
  agent = h.launch({ readOnlyPort });
  h.write('marker.yaml', busyboxPod('marker', SLEEP_LOOP));
  // The image is present (it is the busybox image): only the runtime's lack of image mounts refuses it.
  h.write(
    'imgvol.yaml',
    busyboxPod(
      'imgvol',
      SLEEP_LOOP,
      `    volumeMounts: [{name: tools, mountPath: /tools}]
  volumes: [{name: tools, image: {reference: ${TEST_IMAGES.busybox}, pullPolicy: Never}}]
`,
    ),
  );
}, 120_000);

describe('an image volume on containerd 1.6', () => {
  it('is refused at admission in the kubelet words, and nothing of the pod runs', async () => {
    const status = await waitFor(
      async () => {
        const s = (await apiView('imgvol'))?.status;
        return s?.phase === 'Failed' ? s : undefined;
      },
      { timeoutMs: 60_000, what: 'imgvol Failed' },
    );
    expect(status).toMatchObject({
      reason: 'PodFeatureUnsupported',
      message:
        'Pod was rejected: spec.volumes[0].image: Pod requires node features that are not available: ImageVolume',
    });
    expect(
      agent.records().some((r) => r.msg === 'Pod refused admission' && r.pod === `kube-system/imgvol-${NODE}`),
    ).toBe(true);
    expect(await h.pods('imgvol')).toEqual([]);
    // The manifest itself is valid: it is the node that cannot run it.
    expect(agent.records().filter((r) => r.msg === 'Static pod manifest refused')).toEqual([]);
  });

  it('the pod beside it runs', async () => {
    await waitFor(
      async () =>
        (await h.pods('marker')).some((p) =>
          p.containers.some((c) => c.name === 'main' && c.state === ContainerState.CONTAINER_RUNNING),
        ),
      { timeoutMs: 90_000, what: 'marker running' },
    );
    expect(await h.pods('imgvol')).toEqual([]);
    expect(agent.proc.exitCode).toBeNull();
    expect(agent.records().filter((r) => String(r.msg).startsWith('BUG:'))).toEqual([]);
  });
});
