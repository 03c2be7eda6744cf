// A container that mounts image volumes (KEP-4639): each volume's image is pulled with the volume's
// pull policy (the pod's pull secrets, one image manager) before the container's own, and its mounts
// carry the resolved image in place of a host path, read-only, with the subPath as image_sub_path. A
// volume image that cannot be had fails the container with the image manager's reason, naming that
// image (so its back-off is that image's), and nothing is created.
import type { Container, Secret } from 'kubernetes-types/core/v1';
import type { PodObjects } from '../../../src/node/pod-objects.js';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import {
  CriError,
  MountPropagation,
  type AuthConfig,
  type ContainerConfig,
  type ImageService,
  type ImageSpec,
  type RuntimeService,
} from '../../../src/cri/cri-types.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { ContainerStartError } from '../../../src/kuberuntime/pod-runtime.js';
import { imageVolumesOf } from '../../../src/kuberuntime/image-volumes.js';
import type { ImageVolumeSource } from '../../../src/k8s/pod-api-additions.js';
import { useTmpDir } from '../../support/tmp.js';
import { container, pod } from './fixtures.js';

const MODELS = 'registry.example/models:v1';
const TOOLS = 'registry.example/tools:v2';

function setup(
  opts: {
    present?: string[];
    failPull?: string[];
    volumes?: Record<string, ImageVolumeSource>;
    podObjects?: PodObjects;
    pullSecrets?: string[];
  } = {},
) {
  const dir = useTmpDir('image-volumes');
  const calls: string[] = [];
  const auths: (AuthConfig | undefined)[] = [];
  const created: ContainerConfig[] = [];
  const present = new Set(opts.present ?? []);
  const runtime = {
    createContainer: async (_sb: string, config: ContainerConfig) => {
      calls.push('CreateContainer');
      created.push(config);
      return 'container1';
    },
    startContainer: async () => {
      calls.push('StartContainer');
    },
  } as unknown as RuntimeService;
  const images = {
    imageStatus: async (s: ImageSpec) => {
      calls.push(`ImageStatus ${s.image}`);
      return present.has(s.image ?? '') ? { id: `sha256:${s.image}` } : undefined;
    },
    pullImage: async (s: ImageSpec, _sb: unknown, auth?: AuthConfig) => {
      calls.push(`PullImage ${s.image}`);
      auths.push(auth);
      if ((opts.failPull ?? []).includes(s.image ?? ''))
        throw new CriError('PullImage', 2, `failed to pull and unpack image "${s.image}": not found`);
      return `sha256:${s.image}`;
    },
  } as unknown as ImageService;
  const logger = createLogger({ format: 'json', verbosity: 0, sink: { write: () => undefined } });
  const ops = new CriPodRuntime({
    runtime,
    images,
    rootDir: `${dir}/root`,
    podLogsDir: `${dir}/pods`,
    nodeName: 'node1',
    nodeIP: '10.0.0.1',
    resolvConf: '',
    logger,
    podObjects: opts.podObjects,
  });
  const volumes = opts.volumes ?? {
    models: { reference: MODELS, pullPolicy: 'IfNotPresent' },
    tools: { reference: TOOLS, pullPolicy: 'Always' },
  };
  const start = (c: Container) => {
    const p = pod({
      spec: {
        hostNetwork: true,
        volumes: [
          { name: 'scratch', emptyDir: {} },
          ...Object.entries(volumes).map(([name, image]) => ({ name, image })),
        ],
        containers: [c],
        imagePullSecrets: (opts.pullSecrets ?? []).map((name) => ({ name })),
      },
    });
    return ops.startContainer(p, { id: 'sandbox1', attempt: 0, ip: '' }, c, 'container', 0);
  };
  return { calls, auths, created, start };
}

const mounting = (mounts: Container['volumeMounts']) => container({ terminationMessagePath: '', volumeMounts: mounts });

describe('a container that mounts image volumes', () => {
  it("pulls each volume's image by its own policy, then its own, and mounts them read-only through the runtime", async () => {
    const t = setup({ present: [MODELS, 'bootlet.local/busybox:1.36'] });
    const started = await t.start(
      mounting([
        { name: 'tools', mountPath: '/tools' },
        { name: 'models', mountPath: '/models', readOnly: false },
        { name: 'models', mountPath: '/weights', subPath: 'v1/weights' },
        { name: 'scratch', mountPath: '/scratch' },
      ]),
    );
    // The pod's order of volumes; IfNotPresent finds models, Always pulls tools.
    expect(t.calls).toEqual([
      `ImageStatus ${MODELS}`,
      `PullImage ${TOOLS}`,
      'ImageStatus bootlet.local/busybox:1.36',
      'CreateContainer',
      'StartContainer',
    ]);
    expect(started.volumeImages).toEqual([{ reference: MODELS }, { reference: TOOLS, pullMs: expect.any(Number) }]);
    const image = (ref: string) => ({
      image: `sha256:${ref}`,
      userSpecifiedImage: ref,
      annotations: expect.objectContaining({ 'kubernetes.io/config.source': 'file' }) as unknown,
      runtimeHandler: '',
    });
    const imageMount = { hostPath: '', readonly: true, selinuxRelabel: false, recursiveReadOnly: false };
    const mounts = t.created[0]!.mounts!;
    expect(mounts.slice(0, 3)).toEqual([
      { ...imageMount, containerPath: '/tools', image: image(TOOLS), imageSubPath: '', propagation: 0 },
      { ...imageMount, containerPath: '/models', image: image(MODELS), imageSubPath: '', propagation: 0 },
      { ...imageMount, containerPath: '/weights', image: image(MODELS), imageSubPath: 'v1/weights', propagation: 0 },
    ]);
    expect(mounts[3]).toMatchObject({ containerPath: '/scratch', image: null, imageSubPath: '', readonly: false });
    expect(mounts[3]!.hostPath).toMatch(/kubernetes\.io~empty-dir\/scratch$/);
  });

  it("pulls a volume's image with the pod's pull secrets, the credential its registry matches", async () => {
    const auth = Buffer.from('robot:t0psecret').toString('base64');
    const secret: Secret = {
      metadata: { name: 'regcred', namespace: 'kube-system' },
      type: 'kubernetes.io/dockerconfigjson',
      data: {
        '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { 'registry.example': { auth } } })).toString(
          'base64',
        ),
      },
    };
    const asked: string[] = [];
    const podObjects = {
      getSecret: async (ns: string, name: string) => {
        asked.push(`${ns}/${name}`);
        return name === 'regcred' ? secret : undefined;
      },
      getServices: async () => [],
    } as unknown as PodObjects;
    const t = setup({ podObjects, pullSecrets: ['regcred'], present: ['bootlet.local/busybox:1.36'] });
    await t.start(mounting([{ name: 'tools', mountPath: '/tools' }]));
    expect(asked).toEqual(['kube-system/regcred']);
    expect(t.calls.filter((c) => c.startsWith('PullImage'))).toEqual([`PullImage ${TOOLS}`]);
    expect(t.auths).toEqual([{ username: 'robot', password: 't0psecret' }]);
  });

  it('keeps the mount propagation asked for', async () => {
    const t = setup({ present: [MODELS, TOOLS, 'bootlet.local/busybox:1.36'] });
    await t.start(mounting([{ name: 'models', mountPath: '/m', mountPropagation: 'HostToContainer' }]));
    expect(t.created[0]!.mounts![0]).toMatchObject({
      propagation: MountPropagation.PROPAGATION_HOST_TO_CONTAINER,
      readonly: true,
    });
  });

  it("fails with ErrImagePull naming the volume's image, pulls the others, and creates nothing", async () => {
    const t = setup({ failPull: [MODELS], present: ['bootlet.local/busybox:1.36'] });
    const err = await t
      .start(
        mounting([
          { name: 'models', mountPath: '/models' },
          { name: 'tools', mountPath: '/tools' },
        ]),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContainerStartError);
    expect(err).toMatchObject({ reason: 'ErrImagePull', step: 'pull', image: MODELS, container: 'app' });
    expect((err as Error).message).toBe(`failed to pull and unpack image "${MODELS}": not found`);
    expect(t.calls).toEqual([`ImageStatus ${MODELS}`, `PullImage ${MODELS}`, `PullImage ${TOOLS}`]);
  });

  it('fails with ErrImageNeverPull for a missing image whose policy is Never', async () => {
    const t = setup({ volumes: { models: { reference: MODELS, pullPolicy: 'Never' } } });
    const err = await t.start(mounting([{ name: 'models', mountPath: '/models' }])).catch((e: unknown) => e);
    expect(err).toMatchObject({
      reason: 'ErrImageNeverPull',
      image: MODELS,
      message: `Container image "${MODELS}" is not present with pull policy of Never`,
    });
    expect(t.calls).toEqual([`ImageStatus ${MODELS}`]);
  });

  it.each([
    ['../escape', "unable to provision SubPath `../escape`: must not contain '..'"],
    ['v1/../../escape', "unable to provision SubPath `v1/../../escape`: must not contain '..'"],
    ['/etc', 'error SubPath `/etc` must not be an absolute path'],
  ])("refuses the subPath %s in the kubelet's words (CreateContainerConfigError)", async (subPath, words) => {
    const t = setup({ present: [MODELS, TOOLS, 'bootlet.local/busybox:1.36'] });
    const err = await t.start(mounting([{ name: 'models', mountPath: '/m', subPath }])).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'CreateContainerConfigError', message: words });
    expect(t.calls).not.toContain('CreateContainer');
  });

  it('mounts nothing of an image volume the container does not name, and pulls nothing for it', async () => {
    const t = setup({ present: ['bootlet.local/busybox:1.36'] });
    const started = await t.start(mounting([{ name: 'scratch', mountPath: '/scratch' }]));
    expect(t.calls).toEqual(['ImageStatus bootlet.local/busybox:1.36', 'CreateContainer', 'StartContainer']);
    expect(started.volumeImages).toEqual([]);
  });
});

describe('imageVolumesOf', () => {
  it("lists the image volumes a container mounts, once each, in the pod's order", () => {
    const p = pod({
      spec: {
        volumes: [
          { name: 'a', image: { reference: 'a:1' } },
          { name: 'b', emptyDir: {} },
          { name: 'c', image: { reference: 'c:1' } },
          { name: 'd', image: { reference: 'd:1' } },
        ],
      },
    });
    const c = container({
      volumeMounts: [
        { name: 'c', mountPath: '/c' },
        { name: 'b', mountPath: '/b' },
        { name: 'a', mountPath: '/a' },
        { name: 'c', mountPath: '/c2' },
      ],
    });
    expect(imageVolumesOf(p, c).map((v) => v.name)).toEqual(['a', 'c']);
  });
});
