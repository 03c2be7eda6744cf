// The env of a container with ConfigMap, Secret and Service references, as makeEnvironmentVariables
// builds it: order, precedence, prefix, optional, the service variables and the errors that make a
// CreateContainerConfigError.
import { describe, expect, it } from 'vitest';
import type { Container, EnvFromSource, EnvVar } from 'kubernetes-types/core/v1';
import { containerEnv, EnvError, type EnvWarning } from '../../../src/kuberuntime/env.js';
import { fetchEnvObjects, ServicesNotReadError } from '../../../src/kuberuntime/env-objects.js';
import { InMemoryPodObjects, service } from '../../support/in-memory-pod-objects.js';
import { container, pod, type TestPod } from './fixtures.js';

const GiB = 1024 ** 3;

function apiPod(over: Partial<NonNullable<TestPod['spec']>> = {}, namespace = 'apps'): TestPod {
  const p = pod({ spec: over, annotations: { 'kubernetes.io/config.source': 'api' } });
  return { ...p, metadata: { ...p.metadata, namespace } };
}

async function envOf(
  p: TestPod,
  c: Container,
  objects: InMemoryPodObjects | undefined,
  warnings: EnvWarning[] = [],
): Promise<Array<[string, string]>> {
  const fetched = await fetchEnvObjects(p, c, objects);
  const ctx = {
    hostIP: '192.0.2.10',
    podIPs: [],
    nodeAllocatable: { cpuMillis: 4000, memoryBytes: 8 * GiB, ephemeralStorageBytes: 0 },
    objects: fetched,
    onWarning: (w: EnvWarning) => warnings.push(w),
  };
  return containerEnv(p, c, ctx).map((e) => [e.key ?? '', e.value ?? '']);
}

function withEnv(env: EnvVar[], envFrom: EnvFromSource[] = []): Container {
  return container({ env, envFrom });
}

describe('env from ConfigMaps and Secrets', () => {
  it('takes envFrom in order with its prefix, env over it in declared order, then the service variables it did not define', async () => {
    const o = new InMemoryPodObjects();
    o.putConfigMap('apps', 'cfg', { B: 'cm-b', A: 'cm-a', SHARED: 'from-cm' });
    o.putSecret('apps', 'sec', { SHARED: 'from-secret', TOKEN: 's3cr3t' });
    o.putService(service('default', 'kubernetes', '10.96.0.1', [{ port: 443, name: 'https' }]));
    const c = withEnv(
      [
        { name: 'A', value: 'env-a' },
        { name: 'KUBERNETES_SERVICE_HOST', value: 'mine' },
        { name: 'URL', value: 'https://$(KUBERNETES_PORT_443_TCP_ADDR):$(P_TOKEN)/$(A)' },
      ],
      [{ configMapRef: { name: 'cfg' } }, { secretRef: { name: 'sec' }, prefix: 'P_' }, { secretRef: { name: 'sec' } }],
    );
    expect(await envOf(apiPod(), c, o)).toEqual([
      ['A', 'env-a'],
      ['B', 'cm-b'],
      ['SHARED', 'from-secret'],
      ['P_SHARED', 'from-secret'],
      ['P_TOKEN', 's3cr3t'],
      ['TOKEN', 's3cr3t'],
      ['KUBERNETES_SERVICE_HOST', 'mine'],
      ['URL', 'https://10.96.0.1:s3cr3t/env-a'],
      ['KUBERNETES_SERVICE_PORT', '443'],
      ['KUBERNETES_SERVICE_PORT_HTTPS', '443'],
      ['KUBERNETES_PORT', 'tcp://10.96.0.1:443'],
      ['KUBERNETES_PORT_443_TCP', 'tcp://10.96.0.1:443'],
      ['KUBERNETES_PORT_443_TCP_PROTO', 'tcp'],
      ['KUBERNETES_PORT_443_TCP_PORT', '443'],
      ['KUBERNETES_PORT_443_TCP_ADDR', '10.96.0.1'],
    ]);
  });

  it('reads configMapKeyRef and secretKeyRef, and each referenced object once', async () => {
    const o = new InMemoryPodObjects();
    o.putConfigMap('apps', 'cfg', { level: 'debug' });
    o.putSecret('apps', 'sec', { password: 'pa:ss' });
    const c = withEnv([
      { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'level' } } },
      { name: 'AGAIN', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'level' } } },
      { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
      // A literal value wins: the reference is never read.
      { name: 'LITERAL', value: 'x', valueFrom: { configMapKeyRef: { name: 'unread', key: 'k' } } },
    ]);
    expect(await envOf(apiPod(), c, o)).toEqual([
      ['LEVEL', 'debug'],
      ['AGAIN', 'debug'],
      ['PASSWORD', 'pa:ss'],
      ['LITERAL', 'x'],
    ]);
    expect(o.reads.filter((r) => !r.startsWith('services'))).toEqual(['configmap apps/cfg', 'secret apps/sec']);
  });

  it('skips what is optional and absent: a missing object (envFrom and keyRef) or a missing key', async () => {
    const o = new InMemoryPodObjects();
    o.putConfigMap('apps', 'cfg', { present: 'yes' });
    const c = withEnv(
      [
        { name: 'GONE', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } },
        { name: 'NOKEY', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'absent', optional: true } } },
        { name: 'NOSECRET', valueFrom: { secretKeyRef: { name: 'nope', key: 'k', optional: true } } },
        { name: 'PRESENT', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'present', optional: true } } },
      ],
      [{ configMapRef: { name: 'nope', optional: true } }, { secretRef: { name: 'nope', optional: true } }],
    );
    expect(await envOf(apiPod(), c, o)).toEqual([['PRESENT', 'yes']]);
  });

  it.each<[string, EnvVar[], EnvFromSource[], string]>([
    [
      'configMapKeyRef to a missing ConfigMap',
      [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'x', key: 'k' } } }],
      [],
      'configmap "x" not found',
    ],
    [
      'a missing key',
      [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }],
      [],
      "couldn't find key k in ConfigMap apps/cfg",
    ],
    [
      'secretKeyRef to a missing Secret',
      [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
      [],
      'secret "s" not found',
    ],
    [
      'a missing Secret key',
      [{ name: 'X', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }],
      [],
      "couldn't find key k in Secret apps/sec",
    ],
    ['envFrom a missing ConfigMap', [], [{ configMapRef: { name: 'x' } }], 'configmap "x" not found'],
    ['envFrom a missing Secret', [], [{ secretRef: { name: 's' } }], 'secret "s" not found'],
  ])('fails on %s with the kubelet message', async (_what, env, envFrom, message) => {
    const o = new InMemoryPodObjects();
    o.putConfigMap('apps', 'cfg', {});
    o.putSecret('apps', 'sec', {});
    const run = envOf(apiPod(), withEnv(env, envFrom), o);
    await expect(run).rejects.toThrow(EnvError);
    await expect(run).rejects.toThrow(message);
  });

  it('fails an object that cannot be read now, even when optional (only "not found" is optional)', async () => {
    const o = new InMemoryPodObjects();
    o.unavailable = true;
    const c = withEnv([{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k', optional: true } } }]);
    await expect(envOf(apiPod(), c, o)).rejects.toThrow('configmap apps/cfg: the API server cannot be reached');
  });

  it('without an API server a reference fails as the kubelet without a client fails it', async () => {
    const c = withEnv([], [{ secretRef: { name: 'sec' } }]);
    await expect(envOf(apiPod(), c, undefined)).rejects.toThrow("couldn't get secret apps/sec, no kubeClient defined");
  });

  it('skips envFrom keys that cannot be variable names, with the kubelet event', async () => {
    const o = new InMemoryPodObjects();
    // Not possible through the API (key rules); an object from elsewhere must still not break the env.
    o.putConfigMap('apps', 'cfg', { 'b=ad': '1', GOOD: '2', 'new\nline': '3' });
    const warnings: EnvWarning[] = [];
    expect(await envOf(apiPod(), withEnv([], [{ configMapRef: { name: 'cfg' } }]), o, warnings)).toEqual([
      ['GOOD', '2'],
    ]);
    expect(warnings).toEqual([
      {
        reason: 'InvalidEnvironmentVariableNames',
        message:
          'Keys [b=ad, new\nline] from the EnvFrom configMap apps/cfg were skipped since they are considered invalid environment variable names.',
      },
    ]);
  });
});

describe('service variables', () => {
  function objects(): InMemoryPodObjects {
    const o = new InMemoryPodObjects();
    o.putService(service('default', 'kubernetes', '10.96.0.1', [{ port: 443, name: 'https' }]));
    o.putService(
      service('apps', 'my-db', '10.96.0.20', [{ port: 5432 }, { port: 9187, name: 'metrics-port', protocol: 'UDP' }]),
    );
    o.putService(service('apps', '9lives', '10.96.0.30', [{ port: 80 }]));
    o.putService(service('apps', 'headless', 'None', [{ port: 80 }]));
    o.putService(service('apps', 'pending', '', [{ port: 80 }]));
    o.putService(service('other', 'elsewhere', '10.96.0.40', [{ port: 80 }]));
    return o;
  }

  it("links every Service of the pod's namespace with a cluster IP, and default/kubernetes", async () => {
    const env = new Map(await envOf(apiPod(), container(), objects()));
    expect([...env.keys()].filter((k) => k.startsWith('MY_DB'))).toEqual([
      'MY_DB_SERVICE_HOST',
      'MY_DB_SERVICE_PORT',
      'MY_DB_SERVICE_PORT_METRICS_PORT',
      'MY_DB_PORT',
      'MY_DB_PORT_5432_TCP',
      'MY_DB_PORT_5432_TCP_PROTO',
      'MY_DB_PORT_5432_TCP_PORT',
      'MY_DB_PORT_5432_TCP_ADDR',
      'MY_DB_PORT_9187_UDP',
      'MY_DB_PORT_9187_UDP_PROTO',
      'MY_DB_PORT_9187_UDP_PORT',
      'MY_DB_PORT_9187_UDP_ADDR',
    ]);
    expect(env.get('MY_DB_PORT')).toBe('tcp://10.96.0.20:5432');
    expect(env.get('MY_DB_SERVICE_PORT_METRICS_PORT')).toBe('9187');
    expect(env.get('MY_DB_PORT_9187_UDP')).toBe('udp://10.96.0.20:9187');
    expect(env.get('_9LIVES_SERVICE_HOST')).toBe('10.96.0.30');
    expect(env.get('KUBERNETES_SERVICE_HOST')).toBe('10.96.0.1');
    expect([...env.keys()].some((k) => /HEADLESS|PENDING|ELSEWHERE/.test(k))).toBe(false);
  });

  it('with enableServiceLinks false keeps only the kubernetes Service', async () => {
    const env = await envOf(apiPod({ enableServiceLinks: false }), container(), objects());
    expect(env.map(([k]) => k).every((k) => k.startsWith('KUBERNETES_'))).toBe(true);
    expect(env).toContainEqual(['KUBERNETES_SERVICE_PORT', '443']);
  });

  it("a Service named kubernetes in the pod's namespace wins over default's", async () => {
    const o = objects();
    o.putService(service('apps', 'kubernetes', '10.96.9.9', [{ port: 8443 }]));
    const env = new Map(await envOf(apiPod(), container(), o));
    expect(env.get('KUBERNETES_SERVICE_HOST')).toBe('10.96.9.9');
    expect(env.get('KUBERNETES_SERVICE_PORT')).toBe('8443');
  });

  it('an API pod waits until the services have been read once; a static pod goes on without them', async () => {
    const o = objects();
    o.servicesUnavailable = true;
    await expect(fetchEnvObjects(apiPod(), container(), o)).rejects.toThrow(ServicesNotReadError);
    await expect(fetchEnvObjects(apiPod(), container(), o)).rejects.toThrow(
      'services have not yet been read at least once, cannot construct envvars',
    );
    expect(await envOf(pod(), container({ env: [{ name: 'A', value: '1' }] }), o)).toEqual([['A', '1']]);
  });

  it('a static pod gets the service variables known when it starts, as the kubelet with a service lister', async () => {
    const env = new Map(await envOf(pod(), container(), objects()));
    expect(env.get('KUBERNETES_SERVICE_HOST')).toBe('10.96.0.1');
  });

  it('without an API server there are none', async () => {
    expect(
      await envOf(apiPod(), container({ env: [{ name: 'A', value: '$(KUBERNETES_SERVICE_HOST)' }] }), undefined),
    ).toEqual([['A', '$(KUBERNETES_SERVICE_HOST)']]);
  });
});
