// Real pods (test/fixtures/addons, see its README: kubeadm's kube-proxy and CoreDNS, the CNIs, the
// usual add-ons, each as the API server stores the Pod its controller creates) go through both ways
// a pod enters bootlet, and none may be refused by a rule of ours: such a pod was accepted by the API
// server, so a refusal would be an outage.
// - API pod: the object as a watch hands it over, through toDesiredPod (config/api/api-pods.ts).
// - Static pod: the same file through loadManifest, and all files through `bootlet validate`'s
//   checkManifests. A static pod may not name API objects (serviceAccountName, configMap and secret
//   volumes and env, the kube-api-access token volume: the kubelet's PreventStaticPodAPIReferences,
//   static-pod-references.ts), so the only refusal allowed there is exactly that list.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { toDesiredPod } from '../../../src/config/api/api-pods';
import { decodeManifest } from '../../../src/config/decode/decode-manifest';
import { loadManifest } from '../../../src/config/manifest';
import { staticPodReferenceErrors } from '../../../src/config/static-pod-references';
import { checkManifests } from '../../../src/config/validate/check-manifests';
import { applySchemeDefaults } from '../../../src/k8s/defaults';

const CORPUS = join(__dirname, '../../fixtures/addons');
const NODE = 'cp-1';
const FILES = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

const text = (f: string): string => readFileSync(join(CORPUS, f), 'utf8');
/** What the API server sends: JSON (the YAML read as Kubernetes reads it, YAML 1.1). */
const asApiObject = (f: string): Pod => JSON.parse(JSON.stringify(parse(text(f), { version: '1.1' }))) as Pod;

/** The refusal a static pod gets for naming API objects, and nothing else. */
function expectedStaticRefusal(f: string): string | undefined {
  const decoded = decodeManifest(text(f));
  if (!decoded.ok) throw new Error(`${f}: ${decoded.message}`);
  const refs = staticPodReferenceErrors(applySchemeDefaults(decoded.pod).spec!);
  return refs.length > 0 ? refs.join('; ') : undefined;
}

/** The pod as an operator would write it as a static pod: without what names API objects. */
function withoutApiReferences(f: string): string {
  const pod = asApiObject(f);
  const spec = pod.spec!;
  delete spec.serviceAccountName;
  delete spec.serviceAccount;
  delete spec.automountServiceAccountToken;
  delete spec.imagePullSecrets;
  const dropped = new Set(
    (spec.volumes ?? []).filter((v) => v.secret || v.configMap || v.projected).map((v) => v.name),
  );
  spec.volumes = (spec.volumes ?? []).filter((v) => !dropped.has(v.name));
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    c.volumeMounts = c.volumeMounts?.filter((m) => !dropped.has(m.name));
    c.env = c.env?.filter((e) => !e.valueFrom?.configMapKeyRef && !e.valueFrom?.secretKeyRef);
    delete c.envFrom;
  }
  return stringify(pod, { version: '1.1' });
}

describe('add-on pods (test/fixtures/addons)', () => {
  it('has the corpus the README lists', () => {
    const readme = readFileSync(join(CORPUS, 'README.md'), 'utf8');
    expect(FILES.length).toBeGreaterThanOrEqual(12);
    for (const f of FILES) expect(readme, f).toContain(`\`${f}\``);
  });

  describe.each(FILES)('%s', (f) => {
    it('is taken as an API pod with no refusal', () => {
      const pod = asApiObject(f);
      const r = toDesiredPod(pod, NODE, new Date(0));
      if ('refused' in r) throw new Error(`${f} refused (${r.reason}): ${r.refused}`);
      expect(r.pod.refusal, `${f}: ${r.pod.refusal?.message}`).toBeUndefined();
      expect(r.pod.uid).toBe(pod.metadata!.uid);
      expect(r.pod.key).toBe(`${pod.metadata!.namespace}/${pod.metadata!.name}`);
    });

    it('is refused as a static pod for its API references only', () => {
      const r = loadManifest(`/etc/kubernetes/manifests/${f}`, text(f), NODE, new Date(0));
      const expected = expectedStaticRefusal(f);
      if ('error' in r) {
        expect(r.error.message).toBe(expected);
      } else {
        expect(expected).toBeUndefined();
        if (r.warnings.length > 0) console.log(`${f}: ${r.warnings.join('; ')}`);
      }
    });

    it('is accepted as a static pod once it names no API object', () => {
      const r = loadManifest(`/etc/kubernetes/manifests/${f}`, withoutApiReferences(f), NODE, new Date(0));
      if ('error' in r) throw new Error(`${f} refused: ${r.error.message}`);
      expect(r.pod.key).toBe(`${asApiObject(f).metadata!.namespace}/${asApiObject(f).metadata!.name}-${NODE}`);
      if (r.warnings.length > 0) console.log(`${f}: ${r.warnings.join('; ')}`);
    });
  });

  it('bootlet validate sees the same', async () => {
    const checks = await checkManifests(
      FILES.map((f) => join(CORPUS, f)),
      { nodeName: NODE },
    );
    expect(checks.map((c) => c.file)).toEqual(FILES.map((f) => join(CORPUS, f)));
    for (const c of checks) {
      const f = c.file.slice(CORPUS.length + 1);
      if (c.result !== 'ignored' && c.warnings.length > 0) console.log(`${f}: ${c.warnings.join('; ')}`);
      const expected = expectedStaticRefusal(f);
      expect(c.result === 'refused' ? c.reason : undefined, f).toBe(expected);
      expect(c.result, f).toBe(expected === undefined ? 'accepted' : 'refused');
    }
  });
});
