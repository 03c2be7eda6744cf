// kubeadm's own static pod manifests (test/fixtures/kubeadm, as kubeadm 1.28-1.34 writes them) are
// accepted as they are, with no warning, and their cosmetic variants keep their identity.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/config/manifest';
import type { StaticPod } from '../../../src/config/types';
import { KUBEADM_VERSIONS } from '../../support/kubeadm-versions.js';

const CORPUS = join(__dirname, '../../fixtures/kubeadm');
const VERSIONS = KUBEADM_VERSIONS;
const MANIFESTS = ['etcd.yaml', 'kube-apiserver.yaml', 'kube-controller-manager.yaml', 'kube-scheduler.yaml'];

function load(text: string, name: string): { pod: StaticPod; warnings: string[] } {
  const r = loadManifest(`/etc/kubernetes/manifests/${name}`, text, 'cp-1', new Date(0));
  if ('error' in r) throw new Error(`${name}: ${r.error.message}`);
  return r;
}

describe('kubeadm static pod manifests', () => {
  it('has the whole corpus', () => {
    for (const v of VERSIONS) expect(readdirSync(join(CORPUS, v, 'manifests')).sort()).toEqual(MANIFESTS);
  });

  for (const v of VERSIONS) {
    for (const m of MANIFESTS) {
      it(`accepts kubeadm ${v} ${m} with no warning`, () => {
        const text = readFileSync(join(CORPUS, v, 'manifests', m), 'utf8');
        const { pod, warnings } = load(text, m);
        expect(warnings).toEqual([]);
        expect(pod.pod.metadata).toMatchObject({ name: `${m.replace('.yaml', '')}-cp-1`, namespace: 'kube-system' });
        expect(pod.pod.spec).toMatchObject({
          hostNetwork: true,
          priorityClassName: 'system-node-critical',
          priority: 2000001000,
        });
        // Without the zero values kubeadm spells out, the pod (and so its UID) is the same.
        const bare = text
          .replace(/^  creationTimestamp: null\n/m, '')
          .replace(/^status: \{\}\n/m, '')
          .replace(/^    resources: \{\}\n/gm, '');
        expect(bare).not.toBe(text);
        expect(load(bare, m).pod.uid).toBe(pod.uid);
      });
    }
  }
});
