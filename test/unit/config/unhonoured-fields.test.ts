// The Pod fields of 1.31–1.36, each through both ways a pod enters: a manifest (decode, defaults,
// validation, the unhonoured fields, identity) and an API pod (toDesiredPod). A field bootlet does
// not honour refuses the pod with the kubelet's reason and names the field; one it honours, or that
// has nothing for a node to do, is kept and accepted; none is dropped as unknown.
import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { toDesiredPod } from '../../../src/config/api/api-pods';
import { decodePod } from '../../../src/config/decode/decode-pod';
import { loadManifest } from '../../../src/config/manifest';
import { unhonouredFields } from '../../../src/config/unhonoured-fields';

const FILE = '/etc/kubernetes/manifests/new-fields.json';
const NODE = 'node-1';
const FEATURE = 'PodFeatureUnsupported';

type Json = Record<string, unknown>;
/** A valid pod, `spec` merged over it and `container` over its one container. */
function podWith(spec: Json = {}, container: Json = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'kube-system' },
    spec: { containers: [{ name: 'c', image: 'busybox:1.36', ...container }], ...spec },
  };
}

/** The manifest's verdict: its refusal message, or the accepted pod's spec and the decoder's warnings. */
function asManifest(obj: Json) {
  const r = loadManifest(FILE, JSON.stringify(obj), NODE, new Date(0));
  if ('error' in r) return { refused: r.error.message, file: r.error.file, podKey: r.error.podKey };
  return { spec: r.pod.pod.spec!, warnings: r.warnings };
}

/** The API pod's verdict: refused outright (reason, message), desired with a refusal, or desired. */
function asApiPod(obj: Json) {
  const decoded = decodePod(obj).pod!;
  const p: Pod = {
    ...decoded,
    metadata: { ...decoded.metadata, uid: '6f1c5a2e-34b1-4d0e-9a0b-3c2d1e0f9a8b' },
    spec: { ...decoded.spec!, nodeName: NODE },
  };
  const r = toDesiredPod(p, NODE, new Date(0));
  if ('refused' in r) return { outright: r.reason, message: r.refused };
  return r.pod.refusal ? { reason: r.pod.refusal.reason, message: r.pod.refusal.message } : { desired: r.pod.pod };
}

describe('an image volume (1.31, KEP-4639)', () => {
  const obj = podWith(
    { volumes: [{ name: 'models', image: { reference: 'registry.example/models:v1' } }] },
    { volumeMounts: [{ name: 'models', mountPath: '/models' }] },
  );

  it('is decoded as an image volume, with its pull policy defaulted, never as an emptyDir', () => {
    const d = decodePod(obj);
    expect(d.warnings).toEqual([]);
    expect(d.pod?.spec?.volumes).toEqual([{ name: 'models', image: { reference: 'registry.example/models:v1' } }]);
  });

  // Whether the node honours it is the runtime's to say: admission decides (admission/image-volumes.ts).
  it('is not refused where the pod is read: neither the manifest nor the API pod', () => {
    expect(unhonouredFields(decodePod(obj).pod!)).toEqual([]);
    const manifest = asManifest(obj);
    expect(manifest.refused).toBeUndefined();
    expect(manifest.spec?.volumes).toEqual([
      { name: 'models', image: { reference: 'registry.example/models:v1', pullPolicy: 'IfNotPresent' } },
    ]);
    const api = asApiPod(obj);
    expect(api).toEqual({ desired: expect.objectContaining({ spec: expect.any(Object) as unknown }) as unknown });
  });

  it('is judged by validation first: an image volume without a reference is the API server refusal', () => {
    const bad = podWith({ volumes: [{ name: 'models', image: { pullPolicy: 'IfNotPresent' } }] });
    expect(asManifest(bad).refused).toBe('spec.volumes[0].image.reference: Required value');
  });
});

describe('the fields bootlet does not honour', () => {
  const cases: { name: string; obj: Json; path: string; reason: string; message: string }[] = [
    {
      name: 'pod-level resources (1.32, KEP-2837)',
      obj: podWith({ resources: { limits: { cpu: '1', memory: '256Mi' } } }),
      path: 'spec.resources',
      reason: 'PodLevelResourcesNotSupported',
      message: 'PodLevelResources feature gate is disabled',
    },
    {
      name: 'supplementalGroupsPolicy: Strict (1.31, KEP-3619)',
      obj: podWith({ securityContext: { supplementalGroupsPolicy: 'Strict' } }),
      path: 'spec.securityContext.supplementalGroupsPolicy',
      reason: 'SupplementalGroupsPolicyNotSupported',
      message: 'SupplementalGroupsPolicy=Strict is not supported in this node',
    },
    {
      name: 'a container stop signal (1.33, KEP-4960)',
      obj: podWith({ os: { name: 'linux' } }, { lifecycle: { stopSignal: 'SIGUSR1' } }),
      path: 'spec.containers[0].lifecycle.stopSignal',
      reason: FEATURE,
      message: 'Pod requires node features that are not available: ContainerStopSignals',
    },
    {
      name: 'container restart rules (1.34, KEP-5307)',
      obj: podWith(
        { restartPolicy: 'Never' },
        { restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }] },
      ),
      path: 'spec.containers[0].restartPolicyRules',
      reason: FEATURE,
      message: 'Pod requires node features that are not available: ContainerRestartRules',
    },
    {
      name: 'an env var from a file (1.34, KEP-3721)',
      obj: podWith(
        { volumes: [{ name: 'env', emptyDir: {} }] },
        { env: [{ name: 'TOKEN', valueFrom: { fileKeyRef: { volumeName: 'env', path: 'vars.env', key: 'TOKEN' } } }] },
      ),
      path: 'spec.containers[0].env[0].valueFrom.fileKeyRef',
      reason: FEATURE,
      message: 'Pod requires node features that are not available: EnvFiles',
    },
  ];

  for (const c of cases) {
    describe(c.name, () => {
      it('is decoded with no unknown-field warning', () => {
        expect(decodePod(c.obj).warnings).toEqual([]);
      });

      it('refuses the manifest naming the field, with the reason', () => {
        expect(asManifest(c.obj)).toEqual({
          refused: `${c.path}: ${c.reason}: ${c.message}`,
          file: FILE,
          podKey: 'kube-system/web-node-1',
        });
      });

      it('refuses the API pod with the reason (reported Failed), naming the field', () => {
        expect(asApiPod(c.obj)).toEqual({ reason: c.reason, message: `${c.path}: ${c.message}` });
      });
    });
  }

  it('names every field of a pod that sets several, with the first one’s reason for an API pod', () => {
    const obj = podWith(
      { os: { name: 'linux' }, resources: { requests: { cpu: '100m' } } },
      { lifecycle: { stopSignal: 'SIGINT' } },
    );
    expect(asApiPod(obj)).toEqual({
      reason: 'PodLevelResourcesNotSupported',
      message:
        'spec.resources: PodLevelResources feature gate is disabled; spec.containers[0].lifecycle.stopSignal: Pod requires node features that are not available: ContainerStopSignals',
    });
  });

  it('refuses an init container’s fields too', () => {
    const obj = podWith({
      initContainers: [{ name: 'i', image: 'busybox:1.36', restartPolicyRules: [{ action: 'Restart' }] }],
    });
    expect(unhonouredFields(decodePod(obj).pod!).map((f) => f.path)).toEqual([
      'spec.initContainers[0].restartPolicyRules',
    ]);
  });

  it('refuses an API pod’s resource claims (DRA), which no driver prepares here', () => {
    const obj = podWith({ resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu-claim' }] });
    expect(asApiPod(obj)).toEqual({
      reason: FEATURE,
      message: 'spec.resourceClaims: Pod requires node features that are not available: DynamicResourceAllocation',
    });
  });

  it('refuses a pod certificate: a static pod may not name one, an API pod’s is not projected', () => {
    const cert = {
      signerName: 'example.com/signer',
      keyType: 'ED25519',
      credentialBundlePath: 'bundle.pem',
    };
    const obj = podWith({ volumes: [{ name: 'cert', projected: { sources: [{ podCertificate: cert }] } }] });
    expect(decodePod(obj).warnings).toEqual([]);
    expect(asManifest(obj).refused).toBe(
      'spec.volumes[0].projected.sources[0]: static pods may not reference podcertificates',
    );
    expect(asApiPod(obj)).toEqual({
      outright: 'FailedMount',
      message: expect.stringContaining(
        'spec.volumes[0].projected.sources[0].podCertificate: Unsupported value',
      ) as string,
    });
  });
});

describe('the fields bootlet honours, or that ask nothing of a node', () => {
  /** `kept`: the spec field that must come through as written. */
  const cases: { name: string; obj: Json; kept?: string }[] = [
    {
      name: 'hostnameOverride (1.34, KEP-4762): the sandbox hostname',
      obj: podWith({ hostnameOverride: 'web.example' }),
      kept: 'hostnameOverride',
    },
    {
      name: 'supplementalGroupsPolicy: Merge (1.31): what every runtime does',
      obj: podWith({ securityContext: { supplementalGroupsPolicy: 'Merge' } }),
      kept: 'securityContext',
    },
    {
      name: 'seLinuxChangePolicy: Recursive (1.32): the relabelling runtimes do, where SELinux is on',
      obj: podWith({ securityContext: { seLinuxChangePolicy: 'Recursive' } }),
      kept: 'securityContext',
    },
    {
      name: 'schedulingGroup (1.36): the scheduler’s business',
      obj: podWith({ schedulingGroup: { podGroupName: 'training' } }),
      kept: 'schedulingGroup',
    },
    { name: 'empty pod-level resources', obj: podWith({ resources: {} }) },
    { name: 'no restart rules', obj: podWith({}, { restartPolicyRules: [] }) },
  ];
  for (const c of cases) {
    it(`keeps ${c.name}`, () => {
      const m = asManifest(c.obj);
      expect(m).toEqual({ spec: expect.any(Object) as object, warnings: [] });
      if (c.kept) {
        const spec = m.spec as unknown as Json;
        expect(spec[c.kept]).toEqual((c.obj.spec as Json)[c.kept]);
      }
      expect(asApiPod(c.obj)).toEqual({ desired: expect.any(Object) as object });
    });
  }
});
