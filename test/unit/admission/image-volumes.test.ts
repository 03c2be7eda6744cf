// Image volumes (KEP-4639) at admission: refused with PodFeatureUnsupported naming ImageVolume and the
// field of each image volume where the runtime cannot mount images (containerd 1.6/1.7 drop the CRI
// Mount's image: the container would run without its volume); where it mounts images but not their
// sub paths (containerd 2.1 drops image_sub_path: the image's root would show where a directory of it
// was asked for), each subPath of an image volume's mount is refused the same way; admitted where the
// runtime does all the pod asks.
import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { nodeFactsOf } from '../../../src/cli/admission-link.js';
import { imageVolumeSupport } from '../../../src/node/image-volume-support.js';
import type { NodeInfoSource } from '../../../src/node/node-info.js';
import { node, pod } from './pods.js';

const NONE = node({ imageVolumes: { mounts: false, subPaths: false } });
const ROOT_ONLY = node({ imageVolumes: { mounts: true, subPaths: false } });
const ALL = node({ imageVolumes: { mounts: true, subPaths: true } });
const WORDS = 'Pod requires node features that are not available: ImageVolume';

const withImageVolumes = (opts: { static?: boolean; subPath?: boolean } = {}): Pod =>
  pod('models', {
    static: opts.static,
    spec: {
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'models', image: { reference: 'registry.example/models:v1', pullPolicy: 'IfNotPresent' } },
        { name: 'tools', image: { reference: 'registry.example/tools:v2', pullPolicy: 'Always' } },
      ],
      initContainers: [
        {
          name: 'init',
          image: 'i',
          volumeMounts: [{ name: 'tools', mountPath: '/t', ...(opts.subPath ? { subPath: 'bin' } : {}) }],
        },
      ],
    },
    containers: [
      {
        name: 'c',
        image: 'i',
        volumeMounts: [
          { name: 'scratch', mountPath: '/s', subPath: 'x' },
          { name: 'models', mountPath: '/m' },
          { name: 'models', mountPath: '/w', ...(opts.subPath ? { subPath: 'v1/weights' } : {}) },
        ],
      },
    ],
  });

describe('image volume admission', () => {
  it('refuses every image volume where the runtime cannot mount images, static or not', () => {
    for (const p of [withImageVolumes(), withImageVolumes({ static: true })])
      expect(canAdmitPod(p, [], NONE)).toEqual({
        admit: false,
        reason: 'PodFeatureUnsupported',
        message: `spec.volumes[1].image: ${WORDS}; spec.volumes[2].image: ${WORDS}`,
      });
  });

  it('takes a node that says nothing of it as one that cannot', () => {
    expect(canAdmitPod(withImageVolumes(), [], node())).toMatchObject({
      admit: false,
      reason: 'PodFeatureUnsupported',
    });
  });

  it("refuses each subPath of an image volume's mount where the runtime mounts images but not their sub paths", () => {
    expect(canAdmitPod(withImageVolumes({ subPath: true }), [], ROOT_ONLY)).toEqual({
      admit: false,
      reason: 'PodFeatureUnsupported',
      message: `spec.initContainers[0].volumeMounts[0].subPath: ${WORDS}; spec.containers[0].volumeMounts[2].subPath: ${WORDS}`,
    });
    // Without a subPath on an image volume (the emptyDir's is no matter) it runs there.
    expect(canAdmitPod(withImageVolumes(), [], ROOT_ONLY).admit).toBe(true);
  });

  it('admits the pod where the runtime does all it asks; a pod without an image volume anywhere', () => {
    expect(canAdmitPod(withImageVolumes({ subPath: true }), [], ALL).admit).toBe(true);
    expect(canAdmitPod(withImageVolumes({ static: true, subPath: true }), [], ALL).admit).toBe(true);
    expect(canAdmitPod(pod('plain'), [], NONE).admit).toBe(true);
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
    expect(nodeFactsOf(info('containerd://2.1.9+unknown')).imageVolumes).toEqual({ mounts: true, subPaths: false });
    expect(nodeFactsOf(info('containerd://1.6.20')).imageVolumes).toEqual({ mounts: false, subPaths: false });
  });
});

describe('imageVolumeSupport', () => {
  it.each([
    ['containerd://2.2.0', true, true],
    ['containerd://v2.3.4', true, true],
    ['containerd://3.0.0', true, true],
    ['containerd://2.1.9+unknown', true, false],
    ['containerd://2.1.9~ds1', true, false],
    ['containerd://v2.1.0', true, false],
    ['cri-o://1.33.2', true, true],
    ['cri-o://1.31.0', true, false],
    ['containerd://2.0.5', false, false],
    ['containerd://1.7.24', false, false],
    ['containerd://1.6.20', false, false],
    ['cri-o://1.30.4', false, false],
    ['docker://27.0.1', false, false],
    ['constructor://9.9.9', false, false],
    ['containerd://', false, false],
    ['containerd://unknown', false, false],
    ['2.1.9', false, false],
  ])('%s: mounts %s, sub paths %s', (v, mounts, subPaths) => {
    expect(imageVolumeSupport(v)).toEqual({ mounts, subPaths });
  });
});
