import { describe, expect, it } from 'vitest';
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { applySchemeDefaults, defaultImagePullPolicy } from '../../../src/k8s/defaults.js';
import { pod } from '../config/helpers';

const container = (p: Pod, i = 0): Container => p.spec!.containers[i]!;

describe('applySchemeDefaults', () => {
  it('fills the pod spec defaults', () => {
    const s = applySchemeDefaults(pod()).spec!;
    expect(s).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      securityContext: {},
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
    });
    expect(s.hostNetwork).toBeUndefined();
  });

  it('keeps what the manifest set', () => {
    const s = applySchemeDefaults(
      pod({ restartPolicy: 'Never', terminationGracePeriodSeconds: 0, enableServiceLinks: false }),
    ).spec!;
    expect(s).toMatchObject({ restartPolicy: 'Never', terminationGracePeriodSeconds: 0, enableServiceLinks: false });
  });

  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['registry:5000/nginx', 'Always'],
    ['registry:5000/nginx:1.25', 'IfNotPresent'],
    ['nginx:1.25', 'IfNotPresent'],
    ['nginx@sha256:0123456789abcdef', 'IfNotPresent'],
    ['nginx:latest@sha256:0123456789abcdef', 'IfNotPresent'],
  ])('image %s pulls %s', (image, policy) => {
    expect(defaultImagePullPolicy(image)).toBe(policy);
  });

  it('fills container defaults, in init containers too', () => {
    const p = applySchemeDefaults(pod({ initContainers: [{ name: 'i', image: 'busybox' }] }));
    for (const c of [container(p), p.spec!.initContainers![0]!]) {
      expect(c).toMatchObject({ terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
    }
    expect(p.spec!.initContainers![0]!.imagePullPolicy).toBe('Always');
    expect(container(p).imagePullPolicy).toBe('IfNotPresent');
  });

  it('defaults port protocol, and hostPort only with hostNetwork (init containers too)', () => {
    const ports = [{ containerPort: 80 }];
    const plain = applySchemeDefaults(pod({ containers: [{ name: 'c', image: 'i', ports }] }));
    expect(container(plain).ports).toEqual([{ containerPort: 80, protocol: 'TCP' }]);
    const host = applySchemeDefaults(
      pod({
        hostNetwork: true,
        containers: [{ name: 'c', image: 'i', ports }],
        initContainers: [{ name: 'i', image: 'i', ports: [{ containerPort: 9, protocol: 'UDP' }] }],
      }),
    );
    expect(container(host).ports).toEqual([{ containerPort: 80, hostPort: 80, protocol: 'TCP' }]);
    expect(host.spec!.initContainers![0]!.ports).toEqual([{ containerPort: 9, hostPort: 9, protocol: 'UDP' }]);
  });

  it('copies limits into missing requests', () => {
    const p = applySchemeDefaults(
      pod({
        containers: [
          { name: 'c', image: 'i', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '100m' } } },
        ],
      }),
    );
    expect(container(p).resources).toEqual({
      limits: { cpu: '1', memory: '1Gi' },
      requests: { cpu: '100m', memory: '1Gi' },
    });
  });

  it('fills probe and httpGet defaults', () => {
    const p = applySchemeDefaults(
      pod({
        containers: [
          {
            name: 'c',
            image: 'i',
            livenessProbe: { httpGet: { port: 80 } },
            readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 2 },
          },
        ],
      }),
    );
    expect(container(p).livenessProbe).toEqual({
      httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(container(p).readinessProbe).toMatchObject({ periodSeconds: 2, timeoutSeconds: 1 });
    expect(container(p).readinessProbe!.initialDelaySeconds).toBeUndefined();
  });

  it('fills volume defaults', () => {
    const p = applySchemeDefaults(
      pod({
        volumes: [
          { name: 'a' },
          { name: 'b', hostPath: { path: '/x' } },
          { name: 'c', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
          { name: 'd', projected: { sources: [] } },
          { name: 'e', hostPath: { path: '/y', type: 'Directory' } },
        ],
      }),
    );
    expect(p.spec!.volumes).toEqual([
      { name: 'a', emptyDir: {} },
      { name: 'b', hostPath: { path: '/x', type: '' } },
      {
        name: 'c',
        downwardAPI: {
          defaultMode: 420,
          items: [{ path: 'n', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } }],
        },
      },
      { name: 'd', projected: { defaultMode: 420, sources: [] } },
      { name: 'e', hostPath: { path: '/y', type: 'Directory' } },
    ]);
  });

  it('takes an image volume as a source: no emptyDir beside it, its pull policy from its reference', () => {
    const p = applySchemeDefaults(
      pod({
        volumes: [
          { name: 'a', image: { reference: 'registry.example/models:v1' } },
          { name: 'b', image: { reference: 'registry.example/models' } },
          { name: 'c', image: { reference: 'registry.example/models:v1', pullPolicy: 'Never' } },
        ],
      }),
    );
    expect(p.spec!.volumes).toEqual([
      { name: 'a', image: { reference: 'registry.example/models:v1', pullPolicy: 'IfNotPresent' } },
      { name: 'b', image: { reference: 'registry.example/models', pullPolicy: 'Always' } },
      { name: 'c', image: { reference: 'registry.example/models:v1', pullPolicy: 'Never' } },
    ]);
  });

  it('defaults env fieldRef apiVersion', () => {
    const p = applySchemeDefaults(
      pod({
        containers: [
          { name: 'c', image: 'i', env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] },
        ],
      }),
    );
    expect(container(p).env![0]!.valueFrom!.fieldRef).toEqual({ apiVersion: 'v1', fieldPath: 'spec.nodeName' });
  });

  it('does not modify its input', () => {
    const input = pod({
      volumes: [{ name: 'a' }],
      containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 1 }] }],
    });
    const before = JSON.stringify(input);
    applySchemeDefaults(input);
    expect(JSON.stringify(input)).toBe(before);
  });
});
