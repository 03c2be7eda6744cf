// CriPodRuntime with a PodObjects: the env's objects reach CreateContainer, a missing one is a
// CreateContainerConfigError before anything is created, and the pod's pull secrets become the
// AuthConfig of PullImage, without a credential in the logs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type {
  AuthConfig,
  ContainerConfig,
  ImageService,
  ImageSpec,
  PodSandboxConfig,
  RuntimeService,
} from '../../../src/cri/cri-types.js';
import { createLogger } from '../../../src/log/logger.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { ContainerStartError } from '../../../src/kuberuntime/pod-runtime.js';
import { InMemoryPodObjects, service } from '../../support/in-memory-pod-objects.js';
import { container, pod, type TestPod } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'bootlet-podobjects-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function apiPod(spec: Partial<NonNullable<TestPod['spec']>>): TestPod {
  const p = pod({ spec: { hostNetwork: true, ...spec }, annotations: { 'kubernetes.io/config.source': 'api' } });
  return { ...p, metadata: { ...p.metadata, namespace: 'apps' } };
}

function setup(objects: InMemoryPodObjects) {
  const created: ContainerConfig[] = [];
  const pulls: Array<AuthConfig | undefined> = [];
  const logs: string[] = [];
  const runtime = {
    createContainer: async (_sb: string, c: ContainerConfig) => (created.push(c), 'c-1'),
    startContainer: async () => undefined,
  } as unknown as RuntimeService;
  const images: ImageService = {
    imageStatus: async () => undefined,
    pullImage: async (_i: ImageSpec, _s?: PodSandboxConfig, auth?: AuthConfig) => (pulls.push(auth), 'sha256:img'),
    listImages: async () => [],
    imageFsInfo: async () => ({ imageFilesystems: [], containerFilesystems: [] }),
  };
  const pods = new CriPodRuntime({
    runtime,
    images,
    rootDir: join(dir, 'root'),
    podLogsDir: join(dir, 'pods'),
    nodeName: 'node1',
    nodeIP: '10.0.0.7',
    resolvConf: '',
    logger: createLogger({ format: 'json', verbosity: 4, sink: { write: (l: string) => void logs.push(l) } }),
    podObjects: objects,
  });
  return { pods, created, pulls, logs };
}

const sandbox = { id: 'sb-1', attempt: 0, ip: '' };

describe('CriPodRuntime with PodObjects', () => {
  it('builds the env from the objects and pulls with the pod secret that matches the registry', async () => {
    const o = new InMemoryPodObjects();
    o.putConfigMap('apps', 'cfg', { LEVEL: 'debug' });
    o.putService(service('default', 'kubernetes', '10.96.0.1', [{ port: 443 }]));
    const auths = { 'reg.example.com': { auth: Buffer.from('robot:t0psecret').toString('base64') } };
    o.putSecret(
      'apps',
      'regcred',
      { '.dockerconfigjson': JSON.stringify({ auths }) },
      'kubernetes.io/dockerconfigjson',
    );
    const { pods, created, pulls, logs } = setup(o);
    const p = apiPod({ imagePullSecrets: [{ name: 'missing' }, { name: 'regcred' }] });
    const c = container({
      image: 'reg.example.com/app:1',
      imagePullPolicy: 'Always',
      envFrom: [{ configMapRef: { name: 'cfg' } }],
    });
    await pods.startContainer(p, sandbox, c, 'container', 0);
    expect(pulls).toEqual([{ username: 'robot', password: 't0psecret' }]);
    expect(created[0]!.envs).toContainEqual({ key: 'LEVEL', value: 'debug' });
    expect(created[0]!.envs).toContainEqual({ key: 'KUBERNETES_SERVICE_HOST', value: '10.96.0.1' });
    // The secret that cannot be read is said by name; no credential is ever logged.
    expect(logs.some((l) => l.includes('Unable to retrieve pull secret') && l.includes('apps/missing'))).toBe(true);
    expect(logs.join('\n')).not.toMatch(/t0psecret|cm9ib3Q6dDBwc2VjcmV0/);
  });

  it('fails a missing ConfigMap as CreateContainerConfigError, before anything is created', async () => {
    const o = new InMemoryPodObjects();
    const { pods, created } = setup(o);
    const c = container({ env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'x', key: 'k' } } }] });
    const err = await pods.startContainer(apiPod({}), sandbox, c, 'container', 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContainerStartError);
    expect(err).toMatchObject({
      reason: 'CreateContainerConfigError',
      message: 'configmap "x" not found',
      step: 'start',
    });
    expect(created).toEqual([]);
  });

  it('an API pod waits for the services to be read once (CreateContainerConfigError), then starts', async () => {
    const o = new InMemoryPodObjects();
    o.servicesUnavailable = true;
    const { pods, created } = setup(o);
    const err = await pods.startContainer(apiPod({}), sandbox, container(), 'container', 0).catch((e: unknown) => e);
    expect(err).toMatchObject({
      reason: 'CreateContainerConfigError',
      message: 'services have not yet been read at least once, cannot construct envvars',
    });
    o.servicesUnavailable = false;
    await pods.startContainer(apiPod({}), sandbox, container(), 'container', 0);
    expect(created).toHaveLength(1);
  });

  it('reports envFrom keys it skipped as warnings for the pod events', async () => {
    const o = new InMemoryPodObjects();
    o.putConfigMap('apps', 'cfg', { 'a=b': '1' });
    const { pods } = setup(o);
    const started = await pods.startContainer(
      apiPod({}),
      sandbox,
      container({ envFrom: [{ configMapRef: { name: 'cfg' } }] }),
      'container',
      0,
    );
    expect(started.warnings).toEqual([
      {
        reason: 'InvalidEnvironmentVariableNames',
        message:
          'Keys [a=b] from the EnvFrom configMap apps/cfg were skipped since they are considered invalid environment variable names.',
      },
    ]);
  });
});
