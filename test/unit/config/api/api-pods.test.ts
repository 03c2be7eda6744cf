import type { Pod, Volume } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { toDesiredPod } from '../../../../src/config/api/api-pods.js';

const NODE = 'n1';
const apiPod = (volumes: Volume[]): Pod => ({ metadata: { name: 'p', namespace: 'kube-system', uid: 'u1' }, spec: { nodeName: NODE, containers: [{ name: 'c', image: 'i' }], volumes } });

describe('toDesiredPod volume kinds', () => {
  it('takes the kinds the node mounts: hostPath, emptyDir, configMap, secret, projected, downwardAPI', () => {
    const r = toDesiredPod(
      apiPod([
        { name: 'a', hostPath: { path: '/x' } },
        { name: 'b', emptyDir: { medium: 'Memory' } },
        { name: 'c', configMap: { name: 'kube-proxy' } },
        { name: 'd', secret: { secretName: 's' } },
        { name: 'e', downwardAPI: { items: [] } },
        { name: 'kube-api-access-abcde', projected: { sources: [{ serviceAccountToken: { path: 'token' } }, { configMap: { name: 'kube-root-ca.crt' } }, { downwardAPI: {} }, { secret: { name: 's' } }] } },
      ]),
      NODE,
      new Date(0),
    );
    expect('pod' in r).toBe(true);
  });

  it('refuses persistentVolumeClaim and the projected sources it does not write, naming them', () => {
    expect(toDesiredPod(apiPod([{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }]), NODE, new Date(0))).toEqual({
      refused: 'spec.volumes[0].persistentVolumeClaim: Unsupported value: volume "data": bootlet mounts only hostPath, emptyDir, configMap, secret, projected and downwardAPI volumes',
      reason: 'FailedMount',
    });
    expect(toDesiredPod(apiPod([{ name: 'p', projected: { sources: [{ clusterTrustBundle: { path: 'b', signerName: 'x' } }] } }]), NODE, new Date(0))).toEqual({
      refused: 'spec.volumes[0].projected.sources[0].clusterTrustBundle: Unsupported value: volume "p": bootlet projects only configMap, secret, downwardAPI and serviceAccountToken sources',
      reason: 'FailedMount',
    });
  });
});
