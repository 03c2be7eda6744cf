// Image volumes (KEP-4639) at admission: refused with PodFeatureUnsupported naming ImageVolume and the
// field of each image volume where the runtime cannot mount images (containerd 1.6/1.7: the CRI Mount's
// image would be dropped, the container run without its volume), admitted where it can (containerd 2.1).
import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { nodeFactsOf } from '../../../src/cli/admission-link.js';
import { runtimeMountsImages } from '../../../src/node/image-volume-support.js';
import type { NodeInfoSource } from '../../../src/node/node-info.js';
import { node, pod } from './pods.js';

const withImageVolumes = (static_ = false): Pod =>
  pod('models', {
    static: static_,
    spec: {
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'models', image: { reference: 'registry.example/models:v1', pullPolicy: 'IfNotPresent' } },
        { name: 'tools', image: { reference: 'registry.example/tools:v2', pullPolicy: 'Always' } },
      ],
    },
  });

describe('image volume admission', () => {
  it('refuses every image volume in the words of unhonoured-fields.ts where the runtime cannot mount images', () => {
    for (const p of [withImageVolumes(), withImageVolumes(true)])
      expect(canAdmitPod(p, [], node({ runtimeMountsImages: false }))).toEqual({
        admit: false,
        reason: 'PodFeatureUnsupported',
        message:
          'spec.volumes[1].image: Pod requires node features that are not available: ImageVolume; ' +
          'spec.volumes[2].image: Pod requires node features that are not available: ImageVolume',
      });
  });

  it('takes a node that says nothing of it as one that cannot', () => {
    expect(canAdmitPod(withImageVolumes(), [], node())).toMatchObject({
      admit: false,
      reason: 'PodFeatureUnsupported',
    });
  });

  it('admits the pod, static or not, where the runtime mounts images; a pod without one anywhere', () => {
    expect(canAdmitPod(withImageVolumes(), [], node({ runtimeMountsImages: true })).admit).toBe(true);
    expect(canAdmitPod(withImageVolumes(true), [], node({ runtimeMountsImages: true })).admit).toBe(true);
    expect(canAdmitPod(pod('plain'), [], node({ runtimeMountsImages: false })).admit).toBe(true);
  });

  it("reads the node's runtime from the Version answer it reports", () => {
    const info = (runtimeVersion: string) =>
      ({
        nodeName: 'n1',
        runtimeVersion,
        taints: [],
        labels: {},
        allocatable: () => ({ cpu: '2', memory: '4Gi', pods: '110' }),
        pressure: () => ({ memory: false, disk: false, pid: false }),
      }) as unknown as NodeInfoSource;
    expect(nodeFactsOf(info('containerd://2.1.9')).runtimeMountsImages).toBe(true);
    expect(nodeFactsOf(info('containerd://1.6.20')).runtimeMountsImages).toBe(false);
  });
});

describe('runtimeMountsImages', () => {
  it.each([
    ['containerd://2.1.9', true],
    ['containerd://v2.1.0', true],
    ['containerd://2.2.0-rc.1', true],
    ['containerd://3.0.0', true],
    ['containerd://2.1.9~ds1', true],
    ['cri-o://1.31.0', true],
    ['cri-o://1.33.2', true],
    ['containerd://2.0.5', false],
    ['containerd://1.7.24', false],
    ['containerd://1.6.20', false],
    ['cri-o://1.30.4', false],
    ['docker://27.0.1', false],
    ['constructor://9.9.9', false],
    ['containerd://', false],
    ['containerd://unknown', false],
    ['2.1.9', false],
  ])('%s: %s', (v, want) => {
    expect(runtimeMountsImages(v)).toBe(want);
  });
});
