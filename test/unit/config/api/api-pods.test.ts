import type { Pod, Volume } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { toDesiredPod } from '../../../../src/config/api/api-pods.js';

const NODE = 'n1';
const apiPod = (volumes: Volume[]): Pod => ({
  metadata: { name: 'p', namespace: 'kube-system', uid: 'u1' },
  spec: { nodeName: NODE, containers: [{ name: 'c', image: 'i' }], volumes },
});

describe('toDesiredPod volume kinds', () => {
  it('takes the kinds the node mounts: hostPath, emptyDir, configMap, secret, projected, downwardAPI', () => {
    const r = toDesiredPod(
      apiPod([
        { name: 'a', hostPath: { path: '/x' } },
        { name: 'b', emptyDir: { medium: 'Memory' } },
        { name: 'c', configMap: { name: 'kube-proxy' } },
        { name: 'd', secret: { secretName: 's' } },
        { name: 'e', downwardAPI: { items: [] } },
        {
          name: 'kube-api-access-abcde',
          projected: {
            sources: [
              { serviceAccountToken: { path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt' } },
              { downwardAPI: {} },
              { secret: { name: 's' } },
            ],
          },
        },
      ]),
      NODE,
      new Date(0),
    );
    expect('pod' in r).toBe(true);
  });

  it('refuses persistentVolumeClaim and the projected sources it does not write, naming them', () => {
    expect(
      toDesiredPod(apiPod([{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }]), NODE, new Date(0)),
    ).toEqual({
      refused:
        'spec.volumes[0].persistentVolumeClaim: Unsupported value: volume "data": bootlet mounts only hostPath, emptyDir, configMap, secret, projected, downwardAPI and image volumes',
      reason: 'FailedMount',
    });
    expect(
      toDesiredPod(
        apiPod([
          { name: 'p', projected: { sources: [{ clusterTrustBundle: { path: 'b', signerName: 'example.com/x' } }] } },
        ]),
        NODE,
        new Date(0),
      ),
    ).toEqual({
      refused:
        'spec.volumes[0].projected.sources[0].clusterTrustBundle: Unsupported value: volume "p": bootlet projects only configMap, secret, downwardAPI and serviceAccountToken sources',
      reason: 'FailedMount',
    });
  });

  it('judges the pod by the API server rules first: an invalid one is Failed in their words, whatever it mounts', () => {
    const r = toDesiredPod(
      apiPod([{ name: 'data', iscsi: { targetPortal: '', iqn: 'x', lun: 0 } }]),
      NODE,
      new Date(0),
    );
    if (!('pod' in r)) throw new Error(`refused outright: ${r.refused}`);
    expect(r.pod.refusal).toEqual({
      reason: 'FailedValidation',
      message:
        'spec.volumes[0].iscsi.targetPortal: Required value; spec.volumes[0].iscsi.iqn: Invalid value: "x": must be valid format starting with iqn, eui, or naa',
    });
  });
});

describe('toDesiredPod validation (what names paths and objects on the node)', () => {
  const valid = (): Pod => ({
    metadata: { name: 'p', namespace: 'kube-system', uid: '0d6c1a5e-6c8b-4c1f-9d7e-2f4b8a9c1e3d' },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      containers: [
        {
          name: 'c',
          image: 'i',
          ports: [{ containerPort: 53, name: 'dns', protocol: 'UDP' }],
          env: [{ name: 'MODE', value: 'x' }],
          volumeMounts: [{ name: 'cfg', mountPath: '/cfg', subPath: 'a/b' }],
        },
      ],
      volumes: [{ name: 'cfg', hostPath: { path: '/etc/x', type: 'DirectoryOrCreate' } }],
      // Allowed in API pods (not in static ones), as are references to ConfigMaps and Secrets.
      ephemeralContainers: [{ name: 'debug', image: 'i', targetContainerName: 'c' }],
    },
  });

  it('takes a valid pod as it is, with no refusal', () => {
    const r = toDesiredPod(valid(), NODE, new Date(0));
    expect('pod' in r && r.pod.refusal).toBeUndefined();
  });

  it("a spec that fails the API server's rules is desired with its refusal, every problem named in the server's words", () => {
    const p = valid();
    p.spec!.volumes = [{ name: 'Cfg_1', hostPath: { path: '/var/../etc' } }];
    p.spec!.containers = [
      {
        name: 'Bad_Name',
        image: 'i',
        ports: [{ containerPort: 70000 }],
        env: [{ name: 'A=B', value: 'x' }],
        volumeMounts: [{ name: 'Cfg_1', mountPath: '/x', subPath: '../../etc' }],
      },
    ];
    p.spec!.ephemeralContainers = [{ name: 'a/b', image: 'i' }];
    const r = toDesiredPod(p, NODE, new Date(0));
    if (!('pod' in r)) throw new Error(`refused outright: ${r.refused}`);
    expect(r.pod.refusal?.reason).toBe('FailedValidation');
    const message = r.pod.refusal!.message;
    for (const words of [
      'spec.volumes[0].name: Invalid value: "Cfg_1": a lowercase RFC 1123 label must consist of',
      'spec.volumes[0].hostPath.path: Invalid value: "/var/../etc": must not contain \'..\'',
      'spec.containers[0].name: Invalid value: "Bad_Name"',
      'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].env[0].name: Invalid value: "A=B"',
      // The API server names the subPath of a mount without the mount's index.
      'spec.containers[0].volumeMounts.subPath: Invalid value: "../../etc": must not contain \'..\'',
      'spec.ephemeralContainers[0].name: Invalid value: "a/b"',
    ]) {
      expect(message).toContain(words);
    }
  });

  it('a pod whose name, namespace or UID would not be a safe path is refused outright', () => {
    const p: Pod = { ...valid(), metadata: { ...valid().metadata, uid: '../../etc' } };
    expect(toDesiredPod(p, NODE, new Date(0))).toMatchObject({
      reason: 'FailedValidation',
      refused: expect.stringContaining('metadata.uid: Invalid value: "../../etc"'),
    });
    const q: Pod = { ...valid(), metadata: { ...valid().metadata, name: 'a/b' } };
    expect(toDesiredPod(q, NODE, new Date(0))).toMatchObject({
      refused: expect.stringContaining('metadata.name: Invalid value: "a/b"'),
    });
  });

  it('a relative hostPath, which the API server accepts, is not refused (it fails to mount instead)', () => {
    const p = valid();
    p.spec!.volumes = [{ name: 'cfg', hostPath: { path: 'relative/dir' } }];
    const r = toDesiredPod(p, NODE, new Date(0));
    expect('pod' in r && r.pod.refusal).toBeUndefined();
  });
});
