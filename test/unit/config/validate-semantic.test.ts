import { describe, expect, it } from 'vitest';
import type { Pod } from 'kubernetes-types/core/v1';
import { applySchemeDefaults } from '../../../src/k8s/defaults.js';
import { validateSemantic } from '../../../src/config/validate-semantic';
import { pod } from './helpers';

/** Problems of a pod as the manifest loader sees it: defaulted, name suffixed for node "node-a". */
function problems(p: Pod): string[] {
  const d = applySchemeDefaults(p);
  const name = d.metadata?.name;
  return validateSemantic(d, name ? `${name}-node-a` : undefined);
}
const c = (extra: Record<string, unknown> = {}, name = 'c') => ({ name, image: 'busybox:1.36', ...extra });

describe('validateSemantic', () => {
  it('accepts a plain pod', () => {
    expect(problems(pod())).toEqual([]);
  });

  it('needs a name', () => {
    expect(problems(pod({}, {}))).toEqual(['metadata.name: Required value: name is needed for the pod']);
  });

  it('checks the suffixed name as a DNS subdomain of at most 253 characters', () => {
    expect(problems(pod({}, { name: 'Web' }))[0]).toMatch(
      /^metadata\.name: Invalid value: "Web-node-a": a lowercase RFC 1123 subdomain/,
    );
    expect(problems(pod({}, { name: 'a'.repeat(247) }))[0]).toMatch(/must be no more than 253 characters/);
    expect(problems(pod({}, { name: 'a'.repeat(246) }))).toEqual([]);
  });

  it('refuses a pinned uid that is not path-safe (it names directories and runtime objects)', () => {
    expect(problems(pod({}, { name: 'w', uid: '../../../../../ESCAPED/evil' }))).toEqual([
      'metadata.uid: Invalid value: "../../../../../ESCAPED/evil": a pinned uid must be 1 to 36 characters of letters, digits and "-" (a UUID or 32 hex digits)',
    ]);
    expect(problems(pod({}, { name: 'w', uid: 'a'.repeat(37) }))).toHaveLength(1);
    expect(problems(pod({}, { name: 'w', uid: '6f1c5a2e-34b1-4d0e-9a0b-3c2d1e0f9a8b' }))).toEqual([]);
    expect(problems(pod({}, { name: 'w', uid: '0123456789abcdef0123456789abcdef' }))).toEqual([]);
  });

  it('checks the namespace as a DNS label', () => {
    expect(problems(pod({}, { name: 'x', namespace: 'kube.system' }))[0]).toMatch(
      /^metadata\.namespace: Invalid value: "kube.system"/,
    );
    expect(problems(pod({}, { name: 'x', namespace: 'kube-system' }))).toEqual([]);
  });

  it('needs at least one container', () => {
    expect(problems(pod({ containers: [] }))).toEqual(['spec.containers: Required value']);
  });

  it('checks container names and their uniqueness across init and regular containers', () => {
    expect(problems(pod({ containers: [c({}, 'Web')] }))[0]).toMatch(
      /^spec\.containers\[0\]\.name: Invalid value: "Web": a lowercase RFC 1123 label/,
    );
    // The API server checks regular containers first, and names the init container that repeats one.
    expect(problems(pod({ initContainers: [c({}, 'web')], containers: [c({}, 'app'), c({}, 'web')] }))).toEqual([
      'spec.initContainers[0].name: Duplicate value: "web"',
    ]);
    expect(problems(pod({ containers: [c({}, 'web'), c({}, 'web')] }))).toEqual([
      'spec.containers[1].name: Duplicate value: "web"',
    ]);
  });

  it('needs an image, without leading or trailing whitespace', () => {
    expect(problems(pod({ containers: [{ name: 'c' }] }))).toEqual(['spec.containers[0].image: Required value']);
    expect(problems(pod({ containers: [c({ image: '  ' })] }))).toEqual([
      'spec.containers[0].image: Invalid value: "  ": must not have leading or trailing whitespace',
    ]);
    expect(problems(pod({ initContainers: [c({ image: ' busybox:1.36\n' }, 'i')] }))).toEqual([
      'spec.initContainers[0].image: Invalid value: " busybox:1.36\\n": must not have leading or trailing whitespace',
    ]);
    expect(problems(pod({ containers: [c({ image: 'busybox:1.36\u00a0' })] }))).toHaveLength(1);
  });

  it('checks port numbers, protocols, names and name uniqueness', () => {
    const ports = [
      { containerPort: 0 },
      { containerPort: 70000, hostPort: 70000 },
      { containerPort: 80, protocol: 'ICMP' },
      { containerPort: 81, name: 'Http' },
      { containerPort: 82, name: 'http' },
      { containerPort: 83, name: 'http' },
      { containerPort: 84, name: '1234' },
      { containerPort: 85, name: 'a-very-long-port-name' },
    ];
    expect(problems(pod({ containers: [c({ ports })] }))).toEqual([
      'spec.containers[0].ports[0].containerPort: Required value',
      'spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[1].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[2].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      'spec.containers[0].ports[3].name: Invalid value: "Http": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.containers[0].ports[5].name: Duplicate value: "http"',
      'spec.containers[0].ports[6].name: Invalid value: "1234": must contain at least one letter (a-z)',
      'spec.containers[0].ports[7].name: Invalid value: "a-very-long-port-name": must be no more than 15 characters',
    ]);
  });

  it('refuses the same hostPort and protocol twice in the pod, also through hostNetwork defaulting', () => {
    expect(
      problems(
        pod({
          containers: [
            c({ ports: [{ containerPort: 80, hostPort: 8080 }] }, 'a'),
            c({ ports: [{ containerPort: 81, hostPort: 8080 }] }, 'b'),
          ],
        }),
      ),
    ).toEqual(['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']);
    expect(
      problems(
        pod({
          hostNetwork: true,
          containers: [c({ ports: [{ containerPort: 80 }] }, 'a'), c({ ports: [{ containerPort: 80 }] }, 'b')],
        }),
      ),
    ).toEqual(['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//80"']);
    // UDP and TCP on the same number do not collide; a one-shot init container runs before the others.
    expect(
      problems(
        pod({
          initContainers: [c({ ports: [{ containerPort: 80, hostPort: 80 }] }, 'init')],
          containers: [
            c({
              ports: [
                { containerPort: 80, hostPort: 80 },
                { containerPort: 80, hostPort: 80, protocol: 'UDP' },
              ],
            }),
          ],
        }),
      ),
    ).toEqual([]);
  });

  it('checks host ports as the API server does: across the regular containers, and within each init container alone', () => {
    // checkHostPortConflicts over spec.containers, then over each init container on its own (sidecars
    // included), which the API server names as the only entry of a list of one: initContainers[0].
    const sidecarAndMain = pod({
      hostNetwork: true,
      initContainers: [c({ restartPolicy: 'Always', ports: [{ containerPort: 9090, name: 'metrics' }] }, 'proxy')],
      containers: [c({ ports: [{ containerPort: 9090, name: 'metrics' }] })],
    });
    expect(problems(sidecarAndMain)).toEqual([]);
    expect(
      problems(
        pod({
          initContainers: [
            c({}, 'first'),
            c(
              {
                restartPolicy: 'Always',
                ports: [
                  { containerPort: 80, hostPort: 80 },
                  { containerPort: 81, hostPort: 80 },
                ],
              },
              'proxy',
            ),
          ],
        }),
      ),
    ).toEqual(['spec.initContainers[0].ports[1].hostPort: Duplicate value: "TCP//80"']);
  });

  it('checks restartPolicy', () => {
    expect(problems(pod({ restartPolicy: 'Sometimes' }))).toEqual([
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });

  it("checks a container's own restartPolicy and its restartPolicyRules as the 1.36 API server does", () => {
    expect(problems(pod({ initContainers: [c({ restartPolicy: 'Always' }, 'sidecar')] }))).toEqual([]);
    expect(problems(pod({ initContainers: [c({ restartPolicy: 'Never' }, 'init')] }))).toEqual([]);
    expect(problems(pod({ containers: [c({ restartPolicy: 'Never' })] }))).toEqual([]);
    expect(problems(pod({ containers: [c({ restartPolicy: 'Sometimes' })] }))).toEqual([
      'spec.containers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
    ]);
    const rules = (n: number, values: number[]) =>
      Array.from({ length: n }, () => ({ action: 'Restart', exitCodes: { operator: 'In', values } }));
    expect(problems(pod({ containers: [c({ restartPolicyRules: rules(1, [42]) })] }))).toEqual([
      'spec.containers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used',
    ]);
    expect(
      problems(
        pod({
          containers: [
            c({
              restartPolicy: 'Never',
              restartPolicyRules: [
                ...rules(20, [1]),
                { action: 'Ignore', exitCodes: { operator: 'Gt', values: Array.from({ length: 256 }, (_, i) => i) } },
                { action: 'Restart' },
              ],
            }),
          ],
        }),
      ),
    ).toEqual([
      'spec.containers[0].restartPolicyRules: Too many: 22: must have at most 20 items',
      'spec.containers[0].restartPolicyRules[20].action: Unsupported value: "Ignore": supported values: "Restart", "RestartAllContainers"',
      'spec.containers[0].restartPolicyRules[20].exitCodes.operator: Unsupported value: "Gt": supported values: "In", "NotIn"',
      'spec.containers[0].restartPolicyRules[20].exitCodes.values: Too many: 256: must have at most 255 items',
      'spec.containers[0].restartPolicyRules[21].exitCodes: Required value: must be specified',
    ]);
  });

  it('checks volume names, mounts and mount paths', () => {
    const p = pod({
      volumes: [{ name: 'data' }, { name: 'data' }, { name: 'Logs' }],
      containers: [
        c({
          volumeMounts: [
            { name: 'data', mountPath: '/data' },
            { name: 'missing', mountPath: '/m' },
            { name: 'data', mountPath: '/data' },
            { name: 'data', mountPath: '' },
          ],
        }),
      ],
    });
    expect(problems(p)).toEqual([
      'spec.volumes[1].name: Duplicate value: "data"',
      expect.stringMatching(/^spec\.volumes\[2\]\.name: Invalid value: "Logs": a lowercase RFC 1123 label/),
      'spec.containers[0].volumeMounts[1].name: Not found: "missing"',
      'spec.containers[0].volumeMounts[2].mountPath: Invalid value: "/data": must be unique',
      'spec.containers[0].volumeMounts[3].mountPath: Required value',
    ]);
  });

  it('refuses a relative hostPath, one with a .. component, an empty one and an unknown type', () => {
    const vols = (path: string, type?: string) =>
      pod({ volumes: [{ name: 'v', hostPath: { path, ...(type !== undefined ? { type } : {}) } }] });
    expect(problems(vols('etc/kubernetes'))).toEqual([
      'spec.volumes[0].hostPath.path: Invalid value: "etc/kubernetes": must be an absolute path',
    ]);
    expect(problems(vols('/etc/kubernetes/../../root'))).toEqual([
      `spec.volumes[0].hostPath.path: Invalid value: "/etc/kubernetes/../../root": must not contain '..'`,
    ]);
    expect(problems(vols('../x'))).toEqual([
      'spec.volumes[0].hostPath.path: Invalid value: "../x": must be an absolute path',
      `spec.volumes[0].hostPath.path: Invalid value: "../x": must not contain '..'`,
    ]);
    expect(problems(vols(''))).toEqual(['spec.volumes[0].hostPath.path: Required value']);
    expect(problems(vols('/x', 'Dir'))).toEqual([
      'spec.volumes[0].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
    ]);
    // A name merely starting with two dots is no backstep.
    expect(problems(vols('/var/..data', 'DirectoryOrCreate'))).toEqual([]);
  });

  it('refuses an absolute subPath or subPathExpr, or one with a .. component, as the API server does (naming the list, not the mount)', () => {
    const mount = (m: Record<string, string>) =>
      pod({
        volumes: [{ name: 'v', emptyDir: {} }],
        containers: [c({ volumeMounts: [{ name: 'v', mountPath: '/v', ...m }] })],
      });
    expect(problems(mount({ subPath: '/etc' }))).toEqual([
      'spec.containers[0].volumeMounts.subPath: Invalid value: "/etc": must be a relative path',
    ]);
    expect(problems(mount({ subPath: 'a/../../b' }))).toEqual([
      `spec.containers[0].volumeMounts.subPath: Invalid value: "a/../../b": must not contain '..'`,
    ]);
    expect(problems(mount({ subPathExpr: '../$(POD)' }))).toEqual([
      `spec.containers[0].volumeMounts.subPathExpr: Invalid value: "../$(POD)": must not contain '..'`,
    ]);
    expect(problems(mount({ subPath: 'a', subPathExpr: 'b' }))).toEqual([
      'spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "b": subPathExpr and subPath are mutually exclusive',
    ]);
    expect(problems(mount({ subPath: 'conf/..d' }))).toEqual([]);
  });

  it('refuses more than one volume source, naming each after the first in the API server order', () => {
    expect(problems(pod({ volumes: [{ name: 'v', hostPath: { path: '/x' }, emptyDir: {} }] }))).toEqual([
      'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
    ]);
    expect(
      problems(
        pod({ volumes: [{ name: 'v', nfs: { server: 's', path: '/' }, downwardAPI: {}, hostPath: { path: '/x' } }] }),
      ),
    ).toEqual([
      'spec.volumes[0].nfs: Forbidden: may not specify more than 1 volume type',
      'spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type',
    ]);
  });

  it('refuses ephemeral containers (they are only ever added to a pod that exists)', () => {
    expect(problems(pod({ ephemeralContainers: [{ name: 'debug', image: 'busybox' }] }))).toEqual([
      'spec.ephemeralContainers: Forbidden: cannot be set on create',
    ]);
  });

  describe('static pods may not reference API objects', () => {
    const volume = (v: Record<string, unknown>) => pod({ volumes: [{ name: 'v', ...v }] });
    const projected = (source: Record<string, unknown>) => volume({ projected: { sources: [source] } });
    it.each<[string, Pod, string]>([
      [
        'serviceAccountName',
        pod({ serviceAccountName: 'sa' }),
        'spec.serviceAccountName: static pods may not reference serviceaccounts',
      ],
      [
        'serviceAccount (deprecated)',
        pod({ serviceAccount: 'sa' }),
        'spec.serviceAccount: static pods may not reference serviceaccounts',
      ],
      [
        'secret volume',
        volume({ secret: { secretName: 's' } }),
        'spec.volumes[0]: static pods may not reference secrets',
      ],
      [
        'imagePullSecrets',
        pod({ imagePullSecrets: [{ name: 'reg' }] }),
        'spec.imagePullSecrets[0]: static pods may not reference secrets',
      ],
      [
        'env secretKeyRef',
        pod({ containers: [c({ env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] })] }),
        'spec.containers[0].env[0].valueFrom.secretKeyRef: static pods may not reference secrets',
      ],
      [
        'envFrom secretRef (init container)',
        pod({ initContainers: [c({ envFrom: [{ secretRef: { name: 's' } }] }, 'i')] }),
        'spec.initContainers[0].envFrom[0].secretRef: static pods may not reference secrets',
      ],
      [
        'projected secret',
        projected({ secret: { name: 's' } }),
        'spec.volumes[0].projected.sources[0]: static pods may not reference secrets',
      ],
      [
        'configMap volume',
        volume({ configMap: { name: 'cm' } }),
        'spec.volumes[0]: static pods may not reference configmaps',
      ],
      [
        'env configMapKeyRef',
        pod({ containers: [c({ env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }] })] }),
        'spec.containers[0].env[0].valueFrom.configMapKeyRef: static pods may not reference configmaps',
      ],
      [
        'envFrom configMapRef',
        pod({ containers: [c({ envFrom: [{ configMapRef: { name: 'cm' } }] })] }),
        'spec.containers[0].envFrom[0].configMapRef: static pods may not reference configmaps',
      ],
      [
        'projected configMap',
        projected({ configMap: { name: 'cm' } }),
        'spec.volumes[0].projected.sources[0]: static pods may not reference configmaps',
      ],
      [
        'persistentVolumeClaim',
        volume({ persistentVolumeClaim: { claimName: 'pvc' } }),
        'spec.volumes[0]: static pods may not reference persistentvolumeclaims',
      ],
      [
        'ephemeral volume',
        volume({
          ephemeral: {
            volumeClaimTemplate: {
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            },
          },
        }),
        'spec.volumes[0]: static pods may not reference persistentvolumeclaims (via ephemeral volumes)',
      ],
      [
        'csi volume',
        volume({ csi: { driver: 'd' } }),
        'spec.volumes[0]: static pods may not reference csidrivers (via CSI volumes)',
      ],
      [
        'projected clusterTrustBundle',
        projected({ clusterTrustBundle: { path: 'b', signerName: 'example.com/x' } }),
        'spec.volumes[0].projected.sources[0]: static pods may not reference clustertrustbundles',
      ],
      [
        'resourceClaims',
        pod({ resourceClaims: [{ name: 'gpu' }] }),
        'spec.resourceClaims[0]: static pods may not reference resourceclaims',
      ],
      [
        'glusterfs',
        volume({ glusterfs: { endpoints: 'e', path: 'p' } }),
        'spec.volumes[0]: static pods may not reference endpoints (via glusterfs volumes)',
      ],
      [
        'azureFile',
        volume({ azureFile: { secretName: 's', shareName: 'x' } }),
        'spec.volumes[0]: static pods may not reference secrets (via azureFile volumes)',
      ],
      [
        'a volume plugin secretRef',
        volume({ cephfs: { monitors: ['m'], secretRef: { name: 's' } } }),
        'spec.volumes[0].cephfs.secretRef: static pods may not reference secrets',
      ],
    ])('%s', (_what, p, message) => {
      expect(problems(p)).toEqual([message]);
    });

    it('projected serviceAccountToken (which the API server also refuses without a service account)', () => {
      expect(problems(projected({ serviceAccountToken: { path: 't' } }))).toEqual([
        'spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden: must not be specified when serviceAccountName is not set',
        'spec.volumes[0].projected.sources[0]: static pods may not reference serviceaccounts',
      ]);
    });

    it('allows hostPath, emptyDir, downwardAPI, projected downwardAPI, fieldRef env, nfs', () => {
      const p = pod({
        volumes: [
          { name: 'a', hostPath: { path: '/etc/kubernetes' } },
          { name: 'b', emptyDir: {} },
          { name: 'c', downwardAPI: { items: [] } },
          { name: 'd', projected: { sources: [{ downwardAPI: { items: [] } }] } },
          { name: 'e', nfs: { server: 's', path: '/' } },
        ],
        containers: [c({ env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] })],
      });
      expect(problems(p)).toEqual([]);
    });

    it('names every reference, not just the first', () => {
      const p = pod({
        serviceAccountName: 'sa',
        volumes: [
          { name: 's', secret: { secretName: 's' } },
          { name: 'cm', configMap: { name: 'cm' } },
        ],
      });
      expect(problems(p)).toEqual([
        'spec.serviceAccountName: static pods may not reference serviceaccounts',
        'spec.volumes[0]: static pods may not reference secrets',
        'spec.volumes[1]: static pods may not reference configmaps',
      ]);
    });
  });
});
