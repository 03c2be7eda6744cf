import { describe, expect, it } from 'vitest';
import { buildMirrorPod, isMirrorOf } from '../../../../src/apiserver/pods/mirror-pod.js';
import { CONFIG_MIRROR } from '../../../../src/k8s/annotations.js';
import { staticPod } from '../../../e2e/apiserver/fakes.js';

describe('buildMirrorPod', () => {
  const sp = staticPod('etcd', 'n1');

  it('copies the static pod, annotated with the hash and owned by the Node, without identity or status', () => {
    const m = buildMirrorPod(sp, 'n1', 'node-uid');
    expect(m.metadata?.name).toBe('etcd-n1');
    expect(m.metadata?.namespace).toBe('kube-system');
    expect(m.metadata?.uid).toBeUndefined();
    expect(m.metadata?.labels).toEqual(sp.pod.metadata.labels);
    expect(m.metadata?.annotations).toEqual({ ...sp.pod.metadata.annotations, [CONFIG_MIRROR]: sp.uid });
    expect(m.metadata?.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid', controller: true },
    ]);
    expect(m.spec?.nodeName).toBe('n1');
    expect(m.spec?.containers).toEqual(sp.pod.spec?.containers);
    expect(m.status).toBeUndefined();
  });

  it('does not share objects with the static pod', () => {
    const m = buildMirrorPod(sp, 'n1', 'u');
    m.spec!.containers[0].image = 'changed';
    m.metadata!.labels!.x = 'y';
    expect(sp.pod.spec?.containers[0].image).not.toBe('changed');
    expect(sp.pod.metadata.labels?.x).toBeUndefined();
  });

  it('recognises its mirror by name, namespace and hash only', () => {
    const m = buildMirrorPod(sp, 'n1', 'u');
    expect(isMirrorOf(m, sp)).toBe(true);
    expect(isMirrorOf({ ...m, metadata: { ...m.metadata, annotations: { [CONFIG_MIRROR]: 'old' } } }, sp)).toBe(false);
    expect(isMirrorOf(m, staticPod('etcd', 'n1', { image: 'other:1' }))).toBe(false);
  });
});

describe('buildMirrorPod and the Priority admission plugin', () => {
  it('sends no number of its own: the server computes spec.priority from the class', () => {
    const sp = staticPod('etcd', 'n1');
    sp.pod.spec!.priority = 2_000_001_000;
    sp.pod.spec!.preemptionPolicy = 'Never';
    const m = buildMirrorPod(sp, 'n1', 'u');
    expect(m.spec?.priorityClassName).toBe('system-node-critical');
    expect(m.spec?.priority).toBeUndefined();
    expect(m.spec?.preemptionPolicy).toBeUndefined();
    expect(sp.pod.spec?.priority).toBe(2_000_001_000);
  });

  it('keeps preemptionPolicy when no class is named', () => {
    const sp = staticPod('etcd', 'n1');
    delete sp.pod.spec!.priorityClassName;
    sp.pod.spec!.preemptionPolicy = 'Never';
    expect(buildMirrorPod(sp, 'n1', 'u').spec?.preemptionPolicy).toBe('Never');
  });
});
