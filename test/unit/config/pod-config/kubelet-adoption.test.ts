// Recognising a kubelet's running static pod as the pod of the same manifest: checked against the
// exact labels and annotations a kubelet 1.34 writes for the kubeadm 1.34 control-plane pods.
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../../src/config/manifest.js';
import type { StaticPod } from '../../../../src/config/types.js';
import { findKubeletAdoptions, kubeletPodMismatch } from '../../../../src/config/pod-config/kubelet-adoption.js';
import { ContainerState, PodSandboxState } from '../../../../src/cri/cri-types.js';
import { parseContainerMeta } from '../../../../src/kuberuntime/labels.js';
import type { RuntimePod } from '../../../../src/kuberuntime/runtime-pods.js';
import {
  kubeadmManifest,
  KUBELET_NODE,
  kubeletPodObjects,
  kubeletRuntimeObjects,
  type KubeletPodObjects,
} from '../../../support/kubelet-runtime-objects.js';

const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

function desired(component: string, edit: (text: string) => string = (t) => t): StaticPod {
  const r = loadManifest(
    `/etc/kubernetes/manifests/${component}.yaml`,
    edit(kubeadmManifest(component).text),
    KUBELET_NODE,
    new Date(0),
  );
  if ('error' in r) throw new Error(r.error.message);
  return r.pod;
}

/** The runtime pod a kubelet 1.34 made, as bootlet lists it back. */
function kubeletPod(o: KubeletPodObjects, change: (o: KubeletPodObjects) => void = () => {}): RuntimePod {
  const x = structuredClone(o);
  change(x);
  const { uid, name, namespace } = x.sandbox.metadata;
  const meta = parseContainerMeta(x.container.labels, x.container.annotations);
  if (!meta) throw new Error('fixture container labels do not parse');
  return {
    uid,
    name,
    namespace,
    sandboxes: [
      {
        id: `sb-${uid}`,
        state: PodSandboxState.SANDBOX_READY,
        createdAt: 1,
        attempt: 0,
        ip: '',
        additionalIps: [],
        hasStatus: true,
        labels: x.sandbox.labels,
        annotations: x.sandbox.annotations,
      },
    ],
    containers: [
      {
        id: `c-${uid}`,
        sandboxId: `sb-${uid}`,
        name: meta.containerName,
        state: ContainerState.CONTAINER_RUNNING,
        createdAt: 2,
        startedAt: 0,
        finishedAt: 0,
        exitCode: 0,
        reason: '',
        message: '',
        imageRef: '',
        image: '',
        hasStatus: false,
        meta,
      },
    ],
  };
}

const found = (...pods: RuntimePod[]) => new Map(pods.map((p) => [p.uid, p]));

describe('findKubeletAdoptions', () => {
  it('recognises each kubeadm control-plane pod a kubelet 1.34 runs from the same manifest', () => {
    const pods = COMPONENTS.map((c) => desired(c));
    const runtime = found(...kubeletRuntimeObjects().map((o) => kubeletPod(o)));
    expect(findKubeletAdoptions(pods, runtime)).toEqual(
      COMPONENTS.map((c, i) => ({
        key: `kube-system/${c}-cp-1`,
        file: `/etc/kubernetes/manifests/${c}.yaml`,
        computedUid: pods[i]!.uid,
        runtimeUid: kubeletPodObjects(c).sandbox.metadata.uid,
      })),
    );
  });

  it('does not take a pod whose manifest changed in anything the kubelet recorded', () => {
    const etcd = kubeletPodObjects('etcd');
    const cases: Array<[string, (t: string) => string, string]> = [
      [
        'image',
        (t) => t.replace('registry.k8s.io/etcd:3.6.4-0', 'registry.k8s.io/etcd:3.6.5-0'),
        'container etcd differs',
      ],
      ['container name', (t) => t.replace('    name: etcd\n', '    name: etcd-server\n'), 'no app container'],
      ['a pod label', (t) => t.replace('tier: control-plane', 'tier: other'), 'labels differ'],
      [
        "kubeadm's annotation (the advertise address)",
        (t) =>
          t.replace(
            'etcd.advertise-client-urls: https://192.168.56.10:2379',
            'etcd.advertise-client-urls: https://192.168.56.11:2379',
          ),
        'annotations differ',
      ],
      ['a port', (t) => t.replace('containerPort: 2381', 'containerPort: 2382'), 'container etcd differs'],
      [
        'terminationGracePeriodSeconds',
        (t) => t.replace('  hostNetwork: true\n', '  hostNetwork: true\n  terminationGracePeriodSeconds: 10\n'),
        'container etcd differs',
      ],
      [
        'terminationMessagePolicy',
        (t) => t.replace('    name: etcd\n', '    name: etcd\n    terminationMessagePolicy: FallbackToLogsOnError\n'),
        'container etcd differs',
      ],
    ];
    for (const [what, edit, why] of cases) {
      const d = desired('etcd', edit);
      expect([what, kubeletPodMismatch(d, kubeletPod(etcd))]).toEqual([what, why]);
      expect(findKubeletAdoptions([d], found(kubeletPod(etcd)))).toEqual([]);
    }
  });

  it('leaves out API-sourced pods, bootlet-made pods, pods of another name, and pods with no app container', () => {
    const d = desired('etcd');
    const etcd = kubeletPodObjects('etcd');
    expect(
      kubeletPodMismatch(
        d,
        kubeletPod(etcd, (o) => (o.sandbox.annotations['kubernetes.io/config.source'] = 'api')),
      ),
    ).toBe('not from a manifest file');
    expect(
      kubeletPodMismatch(
        d,
        kubeletPod(etcd, (o) => (o.container.annotations['bootlet.io/container.hash'] = 'abc')),
      ),
    ).toBe('made by bootlet');
    expect(kubeletPodMismatch(d, kubeletPod(kubeletPodObjects('kube-scheduler')))).toBe('another pod');
    const noApp = kubeletPod(etcd);
    noApp.containers = [];
    expect(kubeletPodMismatch(d, noApp)).toBe('no app container');
    // A container the manifest does not have (an init container of an older version) is a difference.
    const extra = kubeletPod(etcd);
    extra.containers.push({
      ...extra.containers[0]!,
      id: 'c-init',
      name: 'init',
      meta: { ...extra.containers[0]!.meta, containerName: 'init' },
    });
    expect(kubeletPodMismatch(d, extra)).toBe('container init differs');
  });

  it('keeps a pinned UID, skips a pod that already runs under its own UID, and takes only one candidate', () => {
    const etcd = kubeletPodObjects('etcd');
    const pinned = desired('etcd', (t) =>
      t.replace('  name: etcd\n', '  name: etcd\n  uid: 11111111-2222-3333-4444-555555555555\n'),
    );
    expect(findKubeletAdoptions([pinned], found(kubeletPod(etcd)))).toEqual([]);

    const d = desired('etcd');
    const own = kubeletPod(etcd, (o) => (o.sandbox.metadata.uid = d.uid));
    expect(findKubeletAdoptions([d], found(own, kubeletPod(etcd)))).toEqual([]);

    // Two versions left by the kubelet with the same evidence: the one with the ready sandbox.
    const exited = kubeletPod(etcd, (o) => (o.sandbox.metadata.uid = 'aaaaaaaa0000000000000000000000aa'));
    exited.sandboxes[0]!.state = PodSandboxState.SANDBOX_NOTREADY;
    expect(findKubeletAdoptions([d], found(exited, kubeletPod(etcd))).map((a) => a.runtimeUid)).toEqual([
      etcd.sandbox.metadata.uid,
    ]);
    const alsoReady = kubeletPod(etcd, (o) => (o.sandbox.metadata.uid = 'bbbbbbbb0000000000000000000000bb'));
    expect(findKubeletAdoptions([d], found(alsoReady, kubeletPod(etcd)))).toEqual([]);
  });
});
