import { describe, expect, it } from 'vitest';
import { podConfigMapNames, podSecretNames } from '../../../../src/apiserver/pod-objects/references.js';

const spec = {
  imagePullSecrets: [{ name: 'pull' }, { name: '' }],
  initContainers: [
    { name: 'init', envFrom: [{ secretRef: { name: 'init-env' } }, { configMapRef: { name: 'init-cm' } }] },
  ],
  containers: [
    {
      name: 'c',
      env: [
        { name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } },
        { name: 'B', valueFrom: { configMapKeyRef: { name: 'env-cm', key: 'k' } } },
        { name: 'C', value: 'plain' },
        { name: 'D', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
    },
  ],
  ephemeralContainers: [{ name: 'debug', envFrom: [{ secretRef: { name: 'debug-env' } }] }],
  volumes: [
    { name: 'v1', secret: { secretName: 'vol-secret' } },
    { name: 'v2', configMap: { name: 'vol-cm' } },
    {
      name: 'kube-api-access',
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { configMap: { name: 'kube-root-ca.crt' } },
          { secret: { name: 'proj-secret' } },
          { downwardAPI: {} },
        ],
      },
    },
    { name: 'csi', csi: { driver: 'x', nodePublishSecretRef: { name: 'csi-secret' } } },
    { name: 'rbd', rbd: { monitors: [], image: 'i', secretRef: { name: 'rbd-secret' } } },
    { name: 'h', hostPath: { path: '/x' } },
  ],
};

describe('the objects a pod refers to (VisitPodSecretNames / VisitPodConfigmapNames)', () => {
  it('finds every Secret: pull secrets, env and envFrom of all container kinds, secret volumes, projected sources, plugin secret refs', () => {
    expect([...podSecretNames(spec)].sort()).toEqual([
      'csi-secret',
      'debug-env',
      'env-secret',
      'init-env',
      'proj-secret',
      'pull',
      'rbd-secret',
      'vol-secret',
    ]);
  });

  it('finds every ConfigMap: env and envFrom, configMap volumes and projected sources', () => {
    expect([...podConfigMapNames(spec)].sort()).toEqual(['env-cm', 'init-cm', 'kube-root-ca.crt', 'vol-cm']);
  });

  it('finds none in a pod without references', () => {
    expect(podSecretNames({ containers: [{ name: 'c' }] }).size).toBe(0);
    expect(podConfigMapNames(undefined).size).toBe(0);
  });
});
