// configMap, secret, projected and downwardAPI volumes as prepareVolumes sets them up from an
// in-test PodObjects; emptyDir medium: Memory; tmpfs mounts found and undone by removePodDirs.
// The tmpfs cases need root (mount(8)).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Container, Volume } from 'kubernetes-types/core/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { collectNodeInfo } from '../../../src/node/node-info.js';
import { prepareVolumes, removePodDirs, VolumeError } from '../../../src/node/volumes.js';
import { tmpfsMountsUnder } from '../../../src/node/tmpfs-volumes.js';
import { FakePodObjects } from '../../support/fake-pod-objects.js';
import { IS_ROOT, unmountAllUnder } from '../../support/mounts.js';
import { useTmpDir } from '../../support/tmp.js';
import { container, pod, type TestPod } from '../kuberuntime/fixtures.js';

const tmp = useTmpDir('object-volumes');
const rootDir = path.join(tmp, 'root');
afterAll(() => unmountAllUnder(tmp));

let serial = 0;
function podWith(
  volumes: Volume[],
  over: {
    fsGroup?: number;
    containers?: Container[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  } = {},
) {
  const c = container({
    volumeMounts: volumes.map((v) => ({ name: v.name, mountPath: `/${v.name}` })),
    resources: { limits: { memory: '64Mi', cpu: '250m' } },
  });
  const uid = `objvol${String(serial++).padStart(4, '0')}`.padEnd(32, '0');
  const p: TestPod = pod({
    spec: {
      volumes,
      containers: over.containers ?? [c],
      securityContext: over.fsGroup !== undefined ? { fsGroup: over.fsGroup } : {},
      serviceAccountName: 'kube-proxy',
    },
    ...(over.labels ? { labels: over.labels } : {}),
    ...(over.annotations ? { annotations: over.annotations } : {}),
  });
  p.metadata.uid = uid;
  return { p, c, uid };
}

const objects = new FakePodObjects();
const NS = 'kube-system';

async function setUp(volumes: Volume[], over: Parameters<typeof podWith>[1] = {}) {
  const { p, c, uid } = podWith(volumes, over);
  const mounts = await prepareVolumes(p, c, { rootDir, podObjects: objects });
  return {
    p,
    c,
    uid,
    mounts,
    dir: (plugin: string, name: string) => path.join(rootDir, 'pods', uid, 'volumes', plugin, name),
  };
}

async function failure(volumes: Volume[]): Promise<string> {
  const err = await setUp(volumes).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(VolumeError);
  return (err as Error).message;
}

const read = (d: string, f: string) => fs.readFileSync(path.join(d, f), 'utf8');
const mode = (d: string, f: string) => fs.statSync(path.join(d, f)).mode & 0o7777;

describe('configMap', () => {
  objects.setConfigMap(
    NS,
    'kube-proxy',
    { 'config.conf': 'mode: iptables\n', kubeconfig: 'k' },
    { blob: Buffer.from([0, 1, 2]).toString('base64') },
  );

  it('every key as a file, 0644 by default, binaryData decoded, the mount read-only', async () => {
    const { mounts, dir } = await setUp([{ name: 'cfg', configMap: { name: 'kube-proxy' } }]);
    const d = dir('kubernetes.io~configmap', 'cfg');
    expect(mounts[0]).toMatchObject({ containerPath: '/cfg', hostPath: d, readonly: true });
    expect(
      fs
        .readdirSync(d)
        .filter((x) => !x.startsWith('..'))
        .sort(),
    ).toEqual(['blob', 'config.conf', 'kubeconfig']);
    expect(read(d, 'config.conf')).toBe('mode: iptables\n');
    expect([...fs.readFileSync(path.join(d, 'blob'))]).toEqual([0, 1, 2]);
    expect(mode(d, 'config.conf')).toBe(0o644);
    expect(fs.readlinkSync(path.join(d, 'config.conf'))).toBe('..data/config.conf');
  });

  it('items map keys to paths, with defaultMode and a per-item mode', async () => {
    const { dir } = await setUp([
      {
        name: 'cfg',
        configMap: {
          name: 'kube-proxy',
          defaultMode: 0o400,
          items: [
            { key: 'config.conf', path: 'a/b.conf' },
            { key: 'kubeconfig', path: 'kc', mode: 0o640 },
          ],
        },
      },
    ]);
    const d = dir('kubernetes.io~configmap', 'cfg');
    expect(
      fs
        .readdirSync(d)
        .filter((x) => !x.startsWith('..'))
        .sort(),
    ).toEqual(['a', 'kc']);
    expect(read(d, 'a/b.conf')).toBe('mode: iptables\n');
    expect(mode(d, 'a/b.conf')).toBe(0o400);
    expect(mode(d, 'kc')).toBe(0o640);
  });

  it('a missing object or key fails with the kubelet FailedMount text; optional ones are skipped', async () => {
    expect(await failure([{ name: 'cfg', configMap: { name: 'nope' } }])).toBe(
      'MountVolume.SetUp failed for volume "cfg" : configmap "nope" not found',
    );
    expect(await failure([{ name: 'cfg', configMap: { name: 'kube-proxy', items: [{ key: 'k', path: 'k' }] } }])).toBe(
      'MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: k',
    );
    const { dir } = await setUp([{ name: 'cfg', configMap: { name: 'nope', optional: true } }]);
    expect(fs.readdirSync(dir('kubernetes.io~configmap', 'cfg')).filter((x) => !x.startsWith('..'))).toEqual([]);
    const opt = await setUp([
      {
        name: 'cfg',
        configMap: {
          name: 'kube-proxy',
          optional: true,
          items: [
            { key: 'k', path: 'k' },
            { key: 'kubeconfig', path: 'kc' },
          ],
        },
      },
    ]);
    expect(fs.readdirSync(opt.dir('kubernetes.io~configmap', 'cfg')).filter((x) => !x.startsWith('..'))).toEqual([
      'kc',
    ]);
  });

  it('an item path that leaves the volume is refused', async () => {
    expect(
      await failure([
        { name: 'cfg', configMap: { name: 'kube-proxy', items: [{ key: 'kubeconfig', path: '../../escape' }] } },
      ]),
    ).toContain("invalid path: must not contain '..'");
    expect(
      await failure([
        { name: 'cfg', configMap: { name: 'kube-proxy', items: [{ key: 'kubeconfig', path: '/etc/x' }] } },
      ]),
    ).toContain('invalid path: must be relative path');
  });

  it('registers the pod with PodObjects; without PodObjects it cannot mount', async () => {
    const { uid } = await setUp([{ name: 'cfg', configMap: { name: 'kube-proxy' } }]);
    expect(objects.registered.has(uid)).toBe(true);
    const { p, c } = podWith([{ name: 'cfg', configMap: { name: 'kube-proxy' } }]);
    await expect(prepareVolumes(p, c, { rootDir })).rejects.toThrow(
      'MountVolume.SetUp failed for volume "cfg" : configmap "kube-proxy": no API server to read it from',
    );
  });

  it('an unavailable object is an error that says so', async () => {
    objects.unavailable = true;
    try {
      expect(await failure([{ name: 'cfg', configMap: { name: 'kube-proxy' } }])).toContain(
        'the API server is not reachable',
      );
    } finally {
      objects.unavailable = false;
    }
  });
});

describe('downwardAPI', () => {
  it('fieldRefs and resourceFieldRefs as the kubelet writes them', async () => {
    const { p, dir } = await setUp(
      [
        {
          name: 'info',
          downwardAPI: {
            items: [
              { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
              { path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } },
              { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' }, mode: 0o600 },
              { path: 'tier', fieldRef: { fieldPath: "metadata.labels['tier']" } },
              { path: 'mem', resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } },
              { path: 'cpu', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu', divisor: '1m' } },
            ],
          },
        },
      ],
      { labels: { tier: 'node', app: 'x"y\n' }, annotations: { b: '2', a: '1' } },
    );
    const d = dir('kubernetes.io~downward-api', 'info');
    expect(read(d, 'name')).toBe(p.metadata.name);
    expect(read(d, 'ns')).toBe(NS);
    expect(read(d, 'uid')).toBe(p.metadata.uid);
    expect(read(d, 'labels')).toBe('app="x\\"y\\n"\ntier="node"');
    expect(read(d, 'annotations')).toBe('a="1"\nb="2"');
    expect(mode(d, 'annotations')).toBe(0o600);
    expect(read(d, 'tier')).toBe('node');
    expect(read(d, 'mem')).toBe('64');
    expect(read(d, 'cpu')).toBe('250');
    // On disk, not a tmpfs: nothing secret in it.
    expect(await tmpfsMountsUnder(path.join(rootDir, 'pods', p.metadata.uid))).toEqual([]);
  });

  it('an unsupported fieldPath is a FailedMount naming the item', async () => {
    expect(
      await failure([
        { name: 'info', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'spec.nodeName' } }] } },
      ]),
    ).toBe('MountVolume.SetUp failed for volume "info" : downwardAPI item "n": unsupported fieldPath: spec.nodeName');
  });

  it('works for a static pod, with no PodObjects', async () => {
    const { p, c, uid } = podWith([
      { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
    ]);
    await prepareVolumes(p, c, { rootDir });
    expect(read(path.join(rootDir, 'pods', uid, 'volumes', 'kubernetes.io~downward-api', 'info'), 'name')).toBe(
      p.metadata.name,
    );
  });
});

describe.skipIf(!IS_ROOT)('secret and projected on tmpfs (needs root)', () => {
  objects.setSecret(NS, 'tls', { 'tls.crt': 'CERT', 'tls.key': 'KEY' });
  objects.setConfigMap(NS, 'kube-root-ca.crt', { 'ca.crt': 'CA' });

  it('a secret is decoded onto a tmpfs mounted on the volume dir', async () => {
    const { dir, uid } = await setUp([{ name: 'certs', secret: { secretName: 'tls', defaultMode: 0o400 } }]);
    const d = dir('kubernetes.io~secret', 'certs');
    expect(read(d, 'tls.key')).toBe('KEY');
    expect(mode(d, 'tls.key')).toBe(0o400);
    expect(await tmpfsMountsUnder(path.join(rootDir, 'pods', uid))).toEqual([fs.realpathSync(d)]);
  });

  it('a missing secret or key is the kubelet text', async () => {
    expect(await failure([{ name: 's', secret: { secretName: 'nope' } }])).toBe(
      'MountVolume.SetUp failed for volume "s" : secret "nope" not found',
    );
    expect(await failure([{ name: 's', secret: { secretName: 'tls', items: [{ key: 'x', path: 'x' }] } }])).toBe(
      'MountVolume.SetUp failed for volume "s" : references non-existent secret key: x',
    );
  });

  it('the kube-api-access volume the ServiceAccount admission adds: token, ca.crt, namespace', async () => {
    const access: Volume = {
      name: 'kube-api-access-x7k2p',
      projected: {
        defaultMode: 0o644,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
        ],
      },
    };
    const before = objects.tokenRequests.length;
    const { dir, uid, p } = await setUp([access]);
    const d = dir('kubernetes.io~projected', 'kube-api-access-x7k2p');
    expect(read(d, 'token')).toBe('token-kube-proxy--3607-0');
    expect(read(d, 'ca.crt')).toBe('CA');
    expect(read(d, 'namespace')).toBe(NS);
    expect(mode(d, 'token')).toBe(0o644);
    expect(objects.tokenRequests.slice(before)).toEqual([
      { pod: p, serviceAccountName: 'kube-proxy', audience: undefined, expirationSeconds: 3607 },
    ]);
    expect(await tmpfsMountsUnder(path.join(rootDir, 'pods', uid))).toEqual([fs.realpathSync(d)]);
  });

  it('a token source: audience, expirationSeconds defaulted to 3600; errors of every source named', async () => {
    const before = objects.tokenRequests.length;
    await setUp([
      { name: 'tok', projected: { sources: [{ serviceAccountToken: { audience: 'vault', path: 'vault-token' } }] } },
    ]);
    expect(objects.tokenRequests.slice(before).map((r) => [r.audience, r.expirationSeconds])).toEqual([
      ['vault', 3600],
    ]);
    expect(
      await failure([{ name: 'p', projected: { sources: [{ configMap: { name: 'a' } }, { secret: { name: 'b' } }] } }]),
    ).toBe('MountVolume.SetUp failed for volume "p" : [configmap "a" not found, secret "b" not found]');
  });

  it('fsGroup: group-owned, group-readable, directories setgid; the token 0640', async () => {
    const { dir, p, c } = await setUp(
      [
        { name: 'cfg', configMap: { name: 'kube-proxy', items: [{ key: 'kubeconfig', path: 'sub/kc', mode: 0o600 }] } },
        { name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
      ],
      { fsGroup: 2000 },
    );
    const d = dir('kubernetes.io~configmap', 'cfg');
    const st = fs.statSync(path.join(d, 'sub', 'kc'));
    expect(st.gid).toBe(2000);
    expect(st.mode & 0o777).toBe(0o640);
    const sub = fs.statSync(path.join(d, 'sub'));
    expect(sub.gid).toBe(2000);
    expect(sub.mode & 0o7777).toBe(0o2755);
    const t = dir('kubernetes.io~projected', 'tok');
    expect(mode(t, 'token')).toBe(0o640);
    expect(fs.statSync(path.join(t, 'token')).gid).toBe(2000);
    // The next container's start leaves the volume root as ownership made it.
    expect(fs.statSync(d).mode & 0o7777).toBe(0o2777);
    await prepareVolumes(p, c, { rootDir, podObjects: objects });
    expect(fs.statSync(d).mode & 0o7777).toBe(0o2777);
    expect(fs.statSync(d).gid).toBe(2000);
  });

  it('emptyDir medium: Memory is a tmpfs with size= from sizeLimit', async () => {
    const { dir, uid } = await setUp([{ name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } }]);
    const d = fs.realpathSync(dir('kubernetes.io~empty-dir', 'scratch'));
    expect(await tmpfsMountsUnder(path.join(rootDir, 'pods', uid))).toEqual([d]);
    const line = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === d)!;
    expect(line).toMatch(/ - tmpfs tmpfs \S*size=8192k/);
  });

  const tmpfsSizeOf = (d: string): string => {
    const line = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === d)!;
    return / - tmpfs tmpfs \S*size=(\d+k)/.exec(line)?.[1] ?? 'none';
  };

  it("emptyDir medium: Memory without sizeLimit is as large as the pod's memory limit (SizeMemoryBackedVolumes)", async () => {
    // podWith's one container has a 64Mi memory limit: the pod can use no more than that.
    const { dir } = await setUp([{ name: 'scratch', emptyDir: { medium: 'Memory' } }]);
    expect(tmpfsSizeOf(fs.realpathSync(dir('kubernetes.io~empty-dir', 'scratch')))).toBe('65536k');
  });

  it("emptyDir medium: Memory: a sizeLimit above the pod's memory limit is cut to the limit", async () => {
    const { dir } = await setUp([{ name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } }]);
    expect(tmpfsSizeOf(fs.realpathSync(dir('kubernetes.io~empty-dir', 'scratch')))).toBe('65536k');
  });

  it('emptyDir medium: Memory in a pod without a memory limit gets node allocatable memory (capacity less memory.available<100Mi, as the Node reports)', async () => {
    const c = container({ volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] });
    const { dir } = await setUp([{ name: 'scratch', emptyDir: { medium: 'Memory' } }], { containers: [c] });
    const allocatable = os.totalmem() - 100 * 2 ** 20;
    const reported = collectNodeInfo({
      nodeName: 'node1',
      nodeIP: '10.0.0.1',
      runtimeVersion: '',
      kubeletVersion: '',
      runtimeReady: () => true,
    }).allocatable().memory;
    expect(reported).toBe(`${Math.floor(allocatable / 1024)}Ki`);
    const pageAligned = Math.ceil(allocatable / 4096) * 4;
    expect(tmpfsSizeOf(fs.realpathSync(dir('kubernetes.io~empty-dir', 'scratch')))).toBe(`${pageAligned}k`);
  });

  it('removePodDirs unmounts every tmpfs found in mountinfo before removing the pod dir', async () => {
    const { uid } = await setUp([
      { name: 'certs', secret: { secretName: 'tls' } },
      { name: 'scratch', emptyDir: { medium: 'Memory' } },
      { name: 'cfg', configMap: { name: 'kube-proxy' } },
    ]);
    const podDir = path.join(rootDir, 'pods', uid);
    expect((await tmpfsMountsUnder(podDir)).length).toBe(2);
    // No PodObjects handed in: as after an agent restart, nothing but mountinfo knows of them.
    await removePodDirs(rootDir, uid);
    expect(fs.existsSync(podDir)).toBe(false);
    expect(await tmpfsMountsUnder(path.join(rootDir, 'pods'))).not.toContain(expect.stringContaining(uid));
  });

  it('a subPath into a configMap volume binds the file its link resolves to', async () => {
    const { p } = podWith([{ name: 'cfg', configMap: { name: 'kube-proxy' } }]);
    const c = container({ volumeMounts: [{ name: 'cfg', mountPath: '/etc/kube-proxy.conf', subPath: 'config.conf' }] });
    p.spec!.containers = [c];
    const m = await prepareVolumes(p, c, { rootDir, podObjects: objects });
    expect(m[0]).toMatchObject({ containerPath: '/etc/kube-proxy.conf', readonly: true });
    expect(m[0]!.hostPath).toContain('/volume-subpaths/cfg/app/0');
    expect(fs.readFileSync(m[0]!.hostPath, 'utf8')).toBe('mode: iptables\n');
    await removePodDirs(rootDir, p.metadata.uid, objects);
  });

  it('refuses to write a secret onto a mount that is not a tmpfs', async () => {
    const { p, c, uid } = podWith([{ name: 'certs', secret: { secretName: 'tls' } }]);
    const d = path.join(rootDir, 'pods', uid, 'volumes', 'kubernetes.io~secret', 'certs');
    const elsewhere = path.join(tmp, `elsewhere-${uid}`);
    fs.mkdirSync(d, { recursive: true });
    fs.mkdirSync(elsewhere);
    execFileSync('mount', ['--bind', elsewhere, d]);
    try {
      await expect(prepareVolumes(p, c, { rootDir, podObjects: objects })).rejects.toThrow(
        'is a mount point, but not a tmpfs',
      );
      expect(fs.readdirSync(elsewhere)).toEqual([]);
    } finally {
      execFileSync('umount', [d]);
    }
  });

  it('a second container start of the same pod mounts nothing twice and writes nothing anew', async () => {
    const { p, c, dir, uid } = await setUp([{ name: 'certs', secret: { secretName: 'tls' } }]);
    const d = dir('kubernetes.io~secret', 'certs');
    const before = fs.readlinkSync(path.join(d, '..data'));
    await prepareVolumes(p, c, { rootDir, podObjects: objects });
    expect(fs.readlinkSync(path.join(d, '..data'))).toBe(before);
    const real = fs.realpathSync(d);
    const lines = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((l) => l.split(' ')[4] === real);
    expect(lines.length).toBe(1);
    await removePodDirs(rootDir, uid, objects);
    expect(objects.unregistered).toContain(uid);
  });
});
