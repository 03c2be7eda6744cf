// imagePullSecrets as the kubelet's keyring reads and matches them, and the pull that tries each
// matching credential in turn.
import { describe, expect, it } from 'vitest';
import type { Secret } from 'kubernetes-types/core/v1';
import type {
  AuthConfig,
  Image,
  ImageFsInfoResponse,
  ImageService,
  ImageSpec,
  PodSandboxConfig,
} from '../../../src/cri/cri-types.js';
import { CriError } from '../../../src/cri/cri-types.js';
import {
  dockerConfigFromSecret,
  DockerKeyring,
  imageRepository,
  keyringFromSecrets,
  registryMatches,
} from '../../../src/kuberuntime/docker-keyring.js';
import { ensureImage, ImageError } from '../../../src/kuberuntime/images.js';
import { buildSandboxConfig } from '../../../src/kuberuntime/sandbox-config.js';
import { container, pod } from './fixtures.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function dockerConfigJson(auths: Record<string, Record<string, string>>, name = 'regcred'): Secret {
  return {
    metadata: { namespace: 'apps', name },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
  };
}

function cred(user: string): Record<string, string> {
  return { auth: b64(`${user}:pw-${user}`) };
}

describe('reading pull secrets', () => {
  it('dockerconfigjson: auth (user:pass, the password may hold a colon) wins over username/password; identitytoken kept', () => {
    const s = dockerConfigJson({
      'reg.example.com': { auth: b64('alice:pa:ss'), username: 'ignored', password: 'ignored' },
      'other.example.com': { username: 'bob', password: 'pw', email: 'b@example.com' },
      'id.example.com': { identitytoken: 'refresh-token' },
    });
    expect(Object.fromEntries(dockerConfigFromSecret(s)!)).toEqual({
      'reg.example.com': { username: 'alice', password: 'pa:ss' },
      'other.example.com': { username: 'bob', password: 'pw', email: 'b@example.com' },
      'id.example.com': { username: '', password: '', identityToken: 'refresh-token' },
    });
  });

  it('dockercfg: the bare map', () => {
    const s: Secret = {
      metadata: { namespace: 'apps', name: 'old' },
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64(JSON.stringify({ 'https://index.docker.io/v1/': cred('hub') })) },
    };
    expect(Object.fromEntries(dockerConfigFromSecret(s)!)).toEqual({
      'https://index.docker.io/v1/': { username: 'hub', password: 'pw-hub' },
    });
  });

  it('ignores a secret of another type or without its key', () => {
    expect(
      dockerConfigFromSecret({ metadata: { name: 'x' }, type: 'Opaque', data: { '.dockerconfigjson': b64('{}') } }),
    ).toBeUndefined();
    expect(
      dockerConfigFromSecret({ metadata: { name: 'x' }, type: 'kubernetes.io/dockerconfigjson', data: {} }),
    ).toBeUndefined();
  });

  it('names a bad secret without showing what it holds', () => {
    const bad: Secret = {
      metadata: { namespace: 'apps', name: 'bad' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': b64('{"auths": {"r": {"auth": "') },
    };
    expect(() => dockerConfigFromSecret(bad)).toThrow('secret apps/bad .dockerconfigjson is not valid JSON');
    const noColon = dockerConfigJson({ r: { auth: b64('hunter2') } }, 'nocolon');
    expect(() => dockerConfigFromSecret(noColon)).toThrow(/^secret apps\/nocolon "r": unable to parse auth field$/);
  });
});

describe('matching a registry', () => {
  it.each([
    ['reg.example.com', 'reg.example.com/app', true],
    ['reg.example.com', 'reg.example.com:5000/app', false],
    ['reg.example.com:5000', 'reg.example.com:5000/app', true],
    ['*.example.com', 'reg.example.com/app', true],
    ['*.example.com', 'example.com/app', false],
    ['*.example.com', 'a.reg.example.com/app', false],
    ['reg?.example.com', 'reg1.example.com/app', true],
    ['reg[0-9].example.com', 'regx.example.com/app', false],
    ['reg.example.com/team', 'reg.example.com/team/app', true],
    ['reg.example.com/team', 'reg.example.com/other/app', false],
  ])('%s against %s: %s', (key, image, want) => expect(registryMatches(key, image)).toBe(want));

  it.each([
    ['busybox', 'docker.io/library/busybox'],
    ['busybox:1.36', 'docker.io/library/busybox'],
    ['user/app@sha256:' + 'a'.repeat(64), 'docker.io/user/app'],
    ['reg.example.com:5000/team/app:1', 'reg.example.com:5000/team/app'],
    ['localhost/app', 'localhost/app'],
  ])('the repository of %s is %s', (image, repo) => expect(imageRepository(image)).toBe(repo));

  it('returns the most specific key first, each key in the order of the secrets', () => {
    const ring = keyringFromSecrets([
      dockerConfigJson({ 'quay.io': cred('host'), 'quay.io/coreos': cred('path1') }, 'a'),
      dockerConfigJson({ 'https://quay.io/coreos': cred('path2') }, 'b'),
    ]);
    expect(ring.lookup('quay.io/coreos/etcd').map((c) => c.username)).toEqual(['path1', 'path2', 'host']);
    expect(ring.lookup('quay.io/other/x').map((c) => c.username)).toEqual(['host']);
    expect(ring.lookup('gcr.io/x')).toEqual([]);
  });

  it('Docker Hub images take the index.docker.io credentials (/v1/ is the host itself); docker.io keys match directly', () => {
    const ring = new DockerKeyring();
    ring.add(new Map([['https://index.docker.io/v1/', { username: 'hub', password: 'p' }]]));
    expect(ring.lookup(imageRepository('busybox')).map((c) => c.username)).toEqual(['hub']);
    expect(ring.lookup('reg.example.com/app')).toEqual([]);
    const direct = new DockerKeyring();
    direct.add(new Map([['docker.io', { username: 'io', password: 'p' }]]));
    expect(direct.lookup(imageRepository('user/app')).map((c) => c.username)).toEqual(['io']);
  });
});

class RecordingImages implements ImageService {
  readonly pulls: Array<AuthConfig | undefined> = [];
  constructor(private readonly accept: (auth: AuthConfig | undefined) => boolean) {}
  async imageStatus(_image: ImageSpec): Promise<Image | undefined> {
    return undefined;
  }
  async pullImage(_image: ImageSpec, _sandbox?: PodSandboxConfig, auth?: AuthConfig): Promise<string> {
    this.pulls.push(auth);
    if (!this.accept(auth))
      throw new CriError(
        'PullImage',
        2,
        `failed to pull and unpack image: unauthorized as ${auth?.username ?? 'anonymous'}`,
      );
    return 'sha256:ok';
  }
  async listImages(): Promise<Image[]> {
    return [];
  }
  async imageFsInfo(): Promise<ImageFsInfoResponse> {
    return { imageFilesystems: [], containerFilesystems: [] };
  }
}

describe('pulling with pull secrets', () => {
  const sandbox = buildSandboxConfig(pod(), { podLogsDir: '/l', attempt: 0 });
  const c = container({ image: 'reg.example.com/app:1', imagePullPolicy: 'Always' });
  const secrets = [
    dockerConfigJson({ 'reg.example.com': cred('old') }, 'a'),
    dockerConfigJson({ 'reg.example.com': cred('new') }, 'b'),
  ];

  it('tries each matching credential in turn until one works', async () => {
    const images = new RecordingImages((a) => a?.username === 'new');
    expect((await ensureImage(images, c, sandbox, { pullSecrets: async () => secrets })).imageRef).toBe('sha256:ok');
    expect(images.pulls).toEqual([
      { username: 'old', password: 'pw-old' },
      { username: 'new', password: 'pw-new' },
    ]);
  });

  it('does not fall back to an anonymous pull when every credential fails', async () => {
    const images = new RecordingImages(() => false);
    const run = ensureImage(images, c, sandbox, { pullSecrets: async () => secrets });
    await expect(run).rejects.toThrow(ImageError);
    await expect(run).rejects.toThrow(
      '[failed to pull and unpack image: unauthorized as old, failed to pull and unpack image: unauthorized as new]',
    );
    expect(images.pulls.map((a) => a?.username)).toEqual(['old', 'new']);
  });

  it('pulls anonymously when no credential matches', async () => {
    const images = new RecordingImages((a) => a === undefined);
    await ensureImage(images, container({ image: 'other.example.com/app:1', imagePullPolicy: 'Always' }), sandbox, {
      pullSecrets: async () => secrets,
    });
    expect(images.pulls).toEqual([undefined]);
  });

  it('a malformed pull secret fails the pull with ErrImagePull, naming the secret only', async () => {
    const images = new RecordingImages(() => true);
    const bad: Secret = {
      metadata: { namespace: 'apps', name: 'bad' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': b64('not json') },
    };
    const err = await ensureImage(images, c, sandbox, { pullSecrets: async () => [bad] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageError);
    expect((err as ImageError).reason).toBe('ErrImagePull');
    expect((err as ImageError).message).toBe('secret apps/bad .dockerconfigjson is not valid JSON');
    expect(images.pulls).toEqual([]);
  });
});
