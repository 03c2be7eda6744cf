import { describe, expect, it } from 'vitest';
import {
  CriError,
  type Image,
  type ImageFsInfoResponse,
  type ImageService,
  type ImageSpec,
  type PodSandboxConfig,
} from '../../../src/cri/cri-types.js';
import { ImageError, defaultPullPolicy, ensureImage, withDefaultTag } from '../../../src/kuberuntime/images.js';
import { buildSandboxConfig } from '../../../src/kuberuntime/sandbox-config.js';
import { container, pod } from './fixtures.js';
import { criOutput } from '../../support/cri-messages.js';

class FakeImages implements ImageService {
  readonly calls: string[] = [];
  constructor(
    readonly present: Map<string, string> = new Map(),
    readonly pullError?: CriError,
  ) {}
  async imageStatus(image: ImageSpec): Promise<Image | undefined> {
    const ref = image.image ?? '';
    this.calls.push(`status ${ref}`);
    const id = this.present.get(ref);
    return id ? criOutput('Image', { id, repoTags: [ref], size: 1 }) : undefined;
  }
  async pullImage(image: ImageSpec, sandbox?: PodSandboxConfig): Promise<string> {
    const ref = image.image ?? '';
    this.calls.push(`pull ${ref}${sandbox ? ' with sandbox' : ''}`);
    if (this.pullError) throw this.pullError;
    const id = `sha256:${ref.length}`;
    this.present.set(ref, id);
    return id;
  }
  async listImages(): Promise<Image[]> {
    return [];
  }
  async imageFsInfo(): Promise<ImageFsInfoResponse> {
    return { imageFilesystems: [], containerFilesystems: [] };
  }
}

const sandbox = buildSandboxConfig(pod(), { podLogsDir: '/l', attempt: 0 });

describe('withDefaultTag / defaultPullPolicy', () => {
  it.each([
    ['busybox', 'busybox:latest'],
    ['busybox:1.36', 'busybox:1.36'],
    ['registry:5000/busybox', 'registry:5000/busybox:latest'],
    ['registry:5000/busybox:1', 'registry:5000/busybox:1'],
    ['busybox@sha256:' + 'a'.repeat(64), 'busybox@sha256:' + 'a'.repeat(64)],
  ])('%s -> %s', (i, o) => expect(withDefaultTag(i)).toBe(o));

  it('Always for latest / untagged, IfNotPresent otherwise', () => {
    expect(defaultPullPolicy('busybox')).toBe('Always');
    expect(defaultPullPolicy('busybox:latest')).toBe('Always');
    expect(defaultPullPolicy('host:5000/busybox')).toBe('Always');
    expect(defaultPullPolicy('busybox:1')).toBe('IfNotPresent');
    expect(defaultPullPolicy('busybox@sha256:' + 'a'.repeat(64))).toBe('IfNotPresent');
  });
});

describe('ensureImage', () => {
  it('IfNotPresent and present: no pull, the image id is the ref', async () => {
    const f = new FakeImages(new Map([['bootlet.local/busybox:1.36', 'sha256:bb']]));
    await expect(ensureImage(f, container(), sandbox)).resolves.toEqual({ imageRef: 'sha256:bb', pulled: false });
    expect(f.calls).toEqual(['status bootlet.local/busybox:1.36']);
  });

  it('IfNotPresent and missing: pulls with the sandbox config', async () => {
    const f = new FakeImages();
    const r = await ensureImage(f, container({ image: 'busybox' }), sandbox);
    expect(r.pulled).toBe(true);
    expect(f.calls).toEqual(['status busybox:latest', 'pull busybox:latest with sandbox']);
  });

  it('Always pulls even when present', async () => {
    const f = new FakeImages(new Map([['busybox:1', 'sha256:old']]));
    const r = await ensureImage(f, container({ image: 'busybox:1', imagePullPolicy: 'Always' }), sandbox);
    expect(r.pulled).toBe(true);
    expect(f.calls).toEqual(['pull busybox:1 with sandbox']);
  });

  it('Never and missing: ErrImageNeverPull with the kubelet message', async () => {
    const err = await ensureImage(
      new FakeImages(),
      container({ image: 'busybox:1', imagePullPolicy: 'Never' }),
      sandbox,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageError);
    expect((err as ImageError).reason).toBe('ErrImageNeverPull');
    expect((err as ImageError).message).toBe('Container image "busybox:1" is not present with pull policy of Never');
  });

  it('Never and present: used', async () => {
    const f = new FakeImages(new Map([['busybox:1', 'sha256:x']]));
    await expect(ensureImage(f, container({ image: 'busybox:1', imagePullPolicy: 'Never' }), sandbox)).resolves.toEqual(
      { imageRef: 'sha256:x', pulled: false },
    );
  });

  it('pull failure: ErrImagePull naming the image', async () => {
    const f = new FakeImages(new Map(), new CriError('PullImage', 2, 'dial tcp: lookup registry: no such host'));
    const err = (await ensureImage(f, container({ image: 'registry/x:1' }), sandbox).catch(
      (e: unknown) => e,
    )) as ImageError;
    expect(err.reason).toBe('ErrImagePull');
    expect(err.message).toBe('failed to pull and unpack image "registry/x:1": dial tcp: lookup registry: no such host');
    const f2 = new FakeImages(
      new Map(),
      new CriError('PullImage', 2, 'failed to pull and unpack image "docker.io/library/x:1": not found'),
    );
    const err2 = (await ensureImage(f2, container({ image: 'x:1' }), sandbox).catch((e: unknown) => e)) as ImageError;
    expect(err2.message).toBe('failed to pull and unpack image "docker.io/library/x:1": not found');
  });
});
