// A Pod field of 1.31–1.36 that bootlet does not honour, through the packaged agent on a real
// containerd: a manifest with an image volume (KEP-4639) was once decoded without it, defaulted to
// an emptyDir and run with an empty directory where the image's files should be. Now the file is
// refused with one line naming it, the pod and the field, nothing of it runs, and the same pod
// without the volume runs beside it.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-fields';
const h = useAgentHarness('new-pod-fields', NODE);

const pod = (name: string, volumes: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; ls /models; while true; do sleep 1; done"]
    volumeMounts:
    - {name: models, mountPath: /models}
  volumes:
${volumes}`;

describe('an image volume in a manifest', () => {
  it('is refused naming the file, the pod and the field, never run with an emptyDir', async () => {
    const agent = h.launch();
    h.write('models.yaml', pod('models', '  - name: models\n    image: {reference: "registry.example/models:v1"}\n'));
    const refused = await agent.waitForLog(
      (r) => r.msg === 'Static pod manifest refused' && r.file === path.join(h.manifests, 'models.yaml'),
      'models.yaml refused',
      90_000,
    );
    expect(refused.pod).toBe(`kube-system/models-${NODE}`);
    expect(refused.err).toBe(
      'spec.volumes[0].image: PodFeatureUnsupported: Pod requires node features that are not available: ImageVolume',
    );

    // The same pod with an emptyDir, written after it, runs: the agent has decided on both files.
    h.write('scratch.yaml', pod('scratch', '  - name: models\n    emptyDir: {}\n'));
    await waitFor(
      async () =>
        (await h.pods('scratch')).some((p) =>
          p.containers.some((c) => c.name === 'main' && c.state === ContainerState.CONTAINER_RUNNING),
        ) || undefined,
      { timeoutMs: 90_000, what: 'scratch running' },
    );
    expect(await h.pods('models')).toEqual([]);
    expect(agent.records().filter((r) => r.msg === 'Static pod manifest refused')).toHaveLength(1);
    expect(agent.records().filter((r) => String(r.msg).startsWith('BUG:'))).toEqual([]);
  });
});
