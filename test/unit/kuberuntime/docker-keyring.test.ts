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
  MAX_REGISTRY_KEYS,
  MAX_REGISTRY_LOCATION_LENGTH,
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
    // url.Parse takes '?' as the start of a query: the key is the host "reg", which matches nothing here.
    ['reg?.example.com', 'reg1.example.com/app', false],
    ['reg[0-9].example.com', 'reg1.example.com/app', true],
    ['reg[0-9].example.com', 'regx.example.com/app', false],
    ['reg.example.com/team', 'reg.example.com/team/app', true],
    ['reg.example.com/team', 'reg.example.com/other/app', false],
  ])('%s against %s: %s', (key, image, want) => expect(registryMatches(key, image)).toBe(want));

  // pkg/credentialprovider keyring_test.go, TestUrlsMatch.
  it.each([
    ['*.kubernetes.io', 'prefix.kubernetes.io', true],
    ['prefix.*.io', 'prefix.kubernetes.io', true],
    ['prefix.kubernetes.*', 'prefix.kubernetes.io', true],
    ['*-good.kubernetes.io', 'prefix-good.kubernetes.io', true],
    ['*.kubernetes.io/blah', 'prefix.kubernetes.io/blah', true],
    ['prefix.*.io/foo', 'prefix.kubernetes.io/foo/bar', true],
    ['*.kubernetes.io:1111/blah', 'prefix.kubernetes.io:1111/blah', true],
    ['prefix.*.io:1111/foo', 'prefix.kubernetes.io:1111/foo/bar', true],
    ['*.kubernetes.io', 'kubernetes.io', false],
    ['*.*.kubernetes.io', 'prefix.kubernetes.io', false],
    ['*.*.kubernetes.io', 'kubernetes.io', false],
    ['kubernetes.io', 'kubernetes.com', false],
    ['k*.io', 'quay.io', false],
    ['*.kubernetes.io:1234/blah', 'prefix.kubernetes.io:1111/blah', false],
    ['prefix.*.io/foo', 'prefix.kubernetes.io:1111/foo/bar', false],
  ])('kubelet TestUrlsMatch: %s against %s: %s', (key, image, want) => expect(registryMatches(key, image)).toBe(want));

  // keyring_test.go, TestDockerKeyringForGlob: each location finds the image <target>/foo/bar.
  it.each([
    ['https://hello.kubernetes.io', 'hello.kubernetes.io'],
    ['https://*.docker.io', 'prefix.docker.io'],
    ['https://prefix.*.io', 'prefix.docker.io'],
    ['https://prefix.docker.*', 'prefix.docker.io'],
    ['https://*.docker.io/path', 'prefix.docker.io/path'],
    ['https://prefix.*.io/path', 'prefix.docker.io/path/subpath'],
    ['https://prefix.docker.*/path', 'prefix.docker.io/path'],
    ['https://*.docker.io:8888', 'prefix.docker.io:8888'],
    ['https://prefix.*.io:8888', 'prefix.docker.io:8888'],
    ['https://prefix.docker.*:8888', 'prefix.docker.io:8888'],
    ['https://*.docker.io/path:1111', 'prefix.docker.io/path:1111'],
    ['https://*.docker.io/v1/', 'prefix.docker.io/path:1111'],
    ['https://*.docker.io/v2/', 'prefix.docker.io/path:1111'],
    ['https://prefix.docker.*/path:1111', 'prefix.docker.io/path:1111'],
    ['prefix.docker.io:1111', 'prefix.docker.io:1111/path'],
    ['*.docker.io:1111', 'prefix.docker.io:1111/path'],
  ])('kubelet TestDockerKeyringForGlob: %s finds %s/foo/bar', (loc, target) => {
    const ring = new DockerKeyring();
    ring.add(new Map([[loc, { username: 'foo', password: 'bar', email: 'foo@bar.baz' }]]));
    expect(ring.lookup(`${target}/foo/bar`)).toEqual([{ username: 'foo', password: 'bar', email: 'foo@bar.baz' }]);
  });

  // keyring_test.go, TestKeyringMiss (and TestKeyringMissWithDockerHubCredentials).
  it.each([
    ['https://hello.kubernetes.io', 'world.mesos.org'],
    ['https://*.docker.com', 'prefix.docker.io'],
    ['https://suffix.*.io', 'prefix.docker.io'],
    ['https://prefix.docker.c*', 'prefix.docker.io'],
    ['https://prefix.*.io/path:1111', 'prefix.docker.io/path/subpath:1111'],
    ['suffix.*.io', 'prefix.docker.io'],
    ['https://index.docker.io/v1/', 'world.mesos.org'],
  ])('kubelet TestKeyringMiss: %s does not find %s/foo/bar', (loc, target) => {
    const ring = new DockerKeyring();
    ring.add(new Map([[loc, { username: 'foo', password: 'bar' }]]));
    expect(ring.lookup(`${target}/foo/bar`)).toEqual([]);
  });

  it('kubelet TestDockerKeyringLookup and TestIssue3797: deeper paths first, a path prefix matches mid-segment, /v1/ is the host', () => {
    const ring = new DockerKeyring();
    ring.add(
      new Map([
        ['bar.example.com/pong', { username: 'grace', password: 'squash' }],
        ['bar.example.com', { username: 'ada', password: 'smash' }],
      ]),
    );
    const users = (image: string) => ring.lookup(image).map((c) => c.username);
    expect(users('bar.example.com')).toEqual(['ada']);
    expect(users('bar.example.com/pong')).toEqual(['grace', 'ada']);
    expect(users('bar.example.com/ping')).toEqual(['ada']);
    expect(users('bar.example.com/pongz')).toEqual(['grace', 'ada']);
    expect(users('bar.example.com/pong/pang')).toEqual(['grace', 'ada']);
    expect(users('example.com')).toEqual([]);
    expect(users('foo.example.com')).toEqual([]);
    const quay = new DockerKeyring();
    quay.add(new Map([['https://quay.io/v1/', { username: 'rex', password: 'tiny arms' }]]));
    for (const image of ['quay.io', 'quay.io/foo', 'quay.io/foo/bar'])
      expect(quay.lookup(image).map((c) => c.username)).toEqual(['rex']);
  });

  it('kubelet TestIsDefaultRegistryMatch: Docker Hub credentials serve only Docker Hub names', () => {
    const ring = new DockerKeyring();
    ring.add(new Map([['https://index.docker.io/v1/', { username: 'hub', password: 'p' }]]));
    const hub = (image: string) => ring.lookup(image).length > 0;
    for (const image of [
      'foo/bar',
      'docker.io/foo/bar',
      'index.docker.io/foo/bar',
      'foo',
      'jenkins',
      'google/docker-registry',
    ])
      expect(hub(image)).toBe(true);
    for (const image of ['', 'registry.tld/foo/bar', 'registry:5000/foo/bar', 'myhostdocker.io/foo/bar'])
      expect(hub(image)).toBe(false);
  });

  it('reads a location as url.Parse does: user info, query and fragment dropped, an invalid host or port ignored, IPv6 with a port', () => {
    expect(registryMatches('user:pw@reg.example.com', 'reg.example.com/app')).toBe(true);
    expect(registryMatches('reg.example.com#frag', 'reg.example.com/app')).toBe(true);
    expect(registryMatches('[::1]:5000', '[::1]:5000/app')).toBe(true);
    expect(registryMatches('[::1]:5000', '[::1]:5001/app')).toBe(false);
    expect(registryMatches('reg.example.com:http', 'reg.example.com/app')).toBe(false);
    expect(registryMatches('reg^.example.com', 'reg^.example.com/app')).toBe(false);
    expect(registryMatches('reg.example.com/te%61m', 'reg.example.com/team/app')).toBe(true);
    expect(registryMatches('reg.example.com/te%6', 'reg.example.com/te%6/app')).toBe(false);
    const ring = new DockerKeyring();
    ring.add(
      new Map([
        ['reg.example.com:port', { username: 'bad', password: 'p' }],
        ['reg.example.com', { username: 'good', password: 'p' }],
      ]),
    );
    expect(ring.lookup('reg.example.com/app').map((c) => c.username)).toEqual(['good']);
  });

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

describe('a hostile pull secret', () => {
  // As a tenant's secret reproduced it: with a regular expression per label this took 26 s of CPU.
  const hostileKey = `${'*a'.repeat(40)}*b.io`;
  const longHost = `${'a'.repeat(200)}.io/app`;

  it('a key of many stars against a long host label answers at once, as Go does', () => {
    expect(registryMatches(hostileKey, longHost)).toBe(false);
    expect(registryMatches(hostileKey, `${'a'.repeat(199)}b.io/app`)).toBe(true);
    const ring = keyringFromSecrets([dockerConfigJson({ [hostileKey]: cred('evil'), 'reg.example.com': cred('ok') })]);
    expect(ring.lookup(longHost)).toEqual([]);
    expect(ring.lookup('reg.example.com/app').map((c) => c.username)).toEqual(['ok']);
  });

  it(`refuses a secret with a registry longer than ${MAX_REGISTRY_LOCATION_LENGTH} characters, naming the secret`, () => {
    const long = `${'*a'.repeat(300)}.io`;
    expect(() => keyringFromSecrets([dockerConfigJson({ [long]: cred('x') }, 'long')])).toThrow(
      `secret apps/long: registry "${long.slice(0, 64)}..." is longer than ${MAX_REGISTRY_LOCATION_LENGTH} characters`,
    );
    const atLimit = 'r'.repeat(MAX_REGISTRY_LOCATION_LENGTH);
    expect(keyringFromSecrets([dockerConfigJson({ [atLimit]: cred('x') })]).lookup(`${atLimit}/app`)).toEqual([]);
  });

  it(`refuses pull secrets naming more than ${MAX_REGISTRY_KEYS} registries, naming the secret that went over`, () => {
    const many = (from: number, n: number, name: string) =>
      dockerConfigJson(
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`reg${from + i}.example.com`, cred(`u${from + i}`)])),
        name,
      );
    const full = keyringFromSecrets([many(0, 100, 'a'), many(100, MAX_REGISTRY_KEYS - 100, 'b')]);
    expect(full.lookup('reg7.example.com/app').map((c) => c.username)).toEqual(['u7']);
    // The same registry in two secrets is one key.
    expect(() => keyringFromSecrets([many(0, MAX_REGISTRY_KEYS, 'a'), many(0, 1, 'dup')])).not.toThrow();
    expect(() => keyringFromSecrets([many(0, 100, 'a'), many(100, MAX_REGISTRY_KEYS - 99, 'b')])).toThrow(
      `secret apps/b: the pod's pull secrets name more than ${MAX_REGISTRY_KEYS} registries; bootlet matches at most that many`,
    );
  });

  it('an image repository longer than 255 characters (docker: repository name must not be more than 255 characters) matches no key', () => {
    const ring = keyringFromSecrets([dockerConfigJson({ '*.io': cred('any') })]);
    expect(ring.lookup(`${'a'.repeat(240)}.io/x`).map((c) => c.username)).toEqual(['any']);
    expect(ring.lookup(`${'a'.repeat(260)}.io/x`)).toEqual([]);
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
