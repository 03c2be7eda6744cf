import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MountPropagation } from '../../../src/cri/cri-types.js';
import {
  PodCleanupError,
  SubPathError,
  UnsafePathComponentError,
  VolumeError,
  prepareVolumes,
  removePodDirs,
} from '../../../src/node/volumes.js';
import { IS_ROOT, mountsUnder, unmountAllUnder } from '../../support/mounts.js';
import { useTmpDir } from '../../support/tmp.js';
import { UID, container, pod } from '../kuberuntime/fixtures.js';

const tmp = useTmpDir('runtime-volumes');
const rootDir = path.join(tmp, 'root');
const host = path.join(tmp, 'host');
const nodeHosts = path.join(tmp, 'node-hosts');
let sockServer: net.Server;

beforeAll(async () => {
  fs.mkdirSync(host, { recursive: true });
  fs.mkdirSync(path.join(host, 'dir'));
  fs.writeFileSync(path.join(host, 'file'), 'x');
  fs.writeFileSync(nodeHosts, '127.0.0.1\tlocalhost\n10.0.0.1\tnode1\n');
  sockServer = net.createServer();
  await new Promise<void>((r) => sockServer.listen(path.join(host, 'sock'), r));
});

afterAll(async () => {
  await new Promise<void>((r) => sockServer.close(() => r()));
});

function hostPathPod(type: string | undefined, p: string, mountOver = {}) {
  const c = container({ volumeMounts: [{ name: 'v', mountPath: '/v', ...mountOver }] });
  return {
    c,
    p: pod({
      spec: {
        hostNetwork: true,
        volumes: [{ name: 'v', hostPath: { path: p, ...(type !== undefined ? { type } : {}) } }],
        containers: [c],
      },
    }),
  };
}

async function mountsFor(type: string | undefined, p: string, mountOver = {}) {
  const { c, p: pd } = hostPathPod(type, p, mountOver);
  return prepareVolumes(pd, c, { rootDir, nodeHostsFile: nodeHosts });
}

async function hostPathErrorAny(type: string, p: string): Promise<string> {
  const err = await mountsFor(type, p).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(VolumeError);
  return (err as VolumeError).message;
}

async function hostPathError(type: string, p: string): Promise<string> {
  const err = await mountsFor(type, p).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(VolumeError);
  return (err as VolumeError).message;
}

describe('hostPath types', () => {
  it('unset and "" check nothing', async () => {
    const missing = path.join(host, 'missing-any');
    expect((await mountsFor(undefined, missing))[0]).toMatchObject({
      containerPath: '/v',
      hostPath: missing,
      readonly: false,
    });
    expect((await mountsFor('', missing))[0]!.hostPath).toBe(missing);
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('DirectoryOrCreate creates the directory and its parents 0755', async () => {
    const d = path.join(host, 'new', 'deep', 'dir');
    await mountsFor('DirectoryOrCreate', d);
    const st = fs.statSync(d);
    expect(st.isDirectory()).toBe(true);
    expect(st.mode & 0o777).toBe(0o755 & ~process.umask());
    expect(await hostPathError('DirectoryOrCreate', path.join(host, 'file'))).toBe(
      `hostPath type check failed: ${path.join(host, 'file')} is not a directory`,
    );
  });

  it('Directory must exist and be a directory', async () => {
    await mountsFor('Directory', path.join(host, 'dir'));
    expect(await hostPathError('Directory', path.join(host, 'nope'))).toBe(
      `hostPath type check failed: ${path.join(host, 'nope')} is not a directory`,
    );
    expect(await hostPathError('Directory', path.join(host, 'file'))).toMatch(/is not a directory$/);
  });

  it('FileOrCreate creates an empty 0644 file, but not its parent', async () => {
    const f = path.join(host, 'created-file');
    await mountsFor('FileOrCreate', f);
    expect(fs.readFileSync(f, 'utf8')).toBe('');
    expect(fs.statSync(f).mode & 0o777).toBe(0o644 & ~process.umask());
    expect(await hostPathError('FileOrCreate', path.join(host, 'no-parent', 'f'))).toMatch(/cannot create .*: ENOENT/);
    expect(await hostPathError('FileOrCreate', path.join(host, 'dir'))).toMatch(/is not a file$/);
  });

  it('File must be a regular file', async () => {
    await mountsFor('File', path.join(host, 'file'));
    expect(await hostPathError('File', path.join(host, 'dir'))).toMatch(/is not a file$/);
    expect(await hostPathError('File', path.join(host, 'nope'))).toMatch(/is not a file$/);
  });

  it('Socket', async () => {
    await mountsFor('Socket', path.join(host, 'sock'));
    expect(await hostPathError('Socket', path.join(host, 'file'))).toMatch(/is not a socket file$/);
  });

  it('CharDevice', async () => {
    await mountsFor('CharDevice', '/dev/null');
    expect(await hostPathError('CharDevice', path.join(host, 'file'))).toMatch(/is not a character device$/);
  });

  it('BlockDevice', async () => {
    const block = fs
      .readdirSync('/dev')
      .map((d) => path.join('/dev', d))
      .find((d) => {
        try {
          return fs.statSync(d).isBlockDevice();
        } catch {
          return false;
        }
      });
    if (block) await mountsFor('BlockDevice', block);
    expect(await hostPathError('BlockDevice', '/dev/null')).toBe(
      'hostPath type check failed: /dev/null is not a block device',
    );
  });

  it('an unknown type is refused', async () => {
    expect(await hostPathError('Whatever', host)).toBe('Whatever is an invalid volume type');
  });
});

describe('mount options', () => {
  it('readOnly and propagation', async () => {
    expect(
      (await mountsFor(undefined, host, { readOnly: true, mountPropagation: 'HostToContainer' }))[0],
    ).toMatchObject({
      readonly: true,
      propagation: MountPropagation.PROPAGATION_HOST_TO_CONTAINER,
    });
    expect((await mountsFor(undefined, host, { mountPropagation: 'None' }))[0]!.propagation).toBe(
      MountPropagation.PROPAGATION_PRIVATE,
    );
    const err = await mountsFor(undefined, host, { mountPropagation: 'Bidirectional' }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /Bidirectional mount propagation is available only to privileged containers/,
    );
    const c = container({
      securityContext: { privileged: true },
      volumeMounts: [{ name: 'v', mountPath: '/v', mountPropagation: 'Bidirectional' }],
    });
    const p = pod({ spec: { volumes: [{ name: 'v', hostPath: { path: host } }], containers: [c] } });
    expect((await prepareVolumes(p, c, { rootDir }))[0]!.propagation).toBe(MountPropagation.PROPAGATION_BIDIRECTIONAL);
  });

  it("refuses an absolute subPath or one with .., with the kubelet's words", async () => {
    const dir = path.join(host, 'dir');
    await expect(mountsFor('Directory', dir, { subPath: '../escape' })).rejects.toThrow(
      "unable to provision SubPath `../escape`: must not contain '..'",
    );
    await expect(mountsFor('Directory', dir, { subPath: '/etc' })).rejects.toThrow(
      'error SubPath `/etc` must not be an absolute path',
    );
  });
});

describe('hostPath paths', () => {
  it('refuses a relative hostPath and one with a .. component', async () => {
    expect(await hostPathErrorAny('', 'relative/dir')).toBe(
      'volume "v": hostPath "relative/dir" must be an absolute path without \'..\'',
    );
    expect(await hostPathErrorAny('', `${host}/../escape`)).toMatch(/must be an absolute path without '\.\.'$/);
  });
});

describe.skipIf(!IS_ROOT)('subPath binds (needs root)', () => {
  afterAll(() => unmountAllUnder(tmp));
  const SUB_UID = 'abcdef0123456789abcdef0123456789';
  const subRoot = path.join(tmp, 'subpath-root');
  const outside = path.join(tmp, 'outside');
  const emptyDir = path.join(subRoot, 'pods', SUB_UID, 'volumes', 'kubernetes.io~empty-dir', 'data');

  function subPathPod(mounts: { subPath?: string; mountPath: string }[], name = 'app') {
    const c = container({ name, volumeMounts: mounts.map((m) => ({ name: 'data', ...m })) });
    const p = pod({ spec: { volumes: [{ name: 'data', emptyDir: {} }], containers: [c] } });
    p.metadata.uid = SUB_UID;
    return { c, p };
  }
  const prepare = ({ c, p }: ReturnType<typeof subPathPod>) => prepareVolumes(p, c, { rootDir: subRoot });
  const target = (container: string, index: number) =>
    path.join(subRoot, 'pods', SUB_UID, 'volume-subpaths', 'data', container, String(index));

  beforeAll(async () => {
    fs.mkdirSync(path.join(outside, 'keep'), { recursive: true });
    fs.writeFileSync(path.join(outside, 'keep', 'precious'), 'host file');
    await prepare(subPathPod([{ mountPath: '/data' }]));
    // What a container could leave in its emptyDir (it is 0777 and its own).
    fs.mkdirSync(path.join(emptyDir, 'conf'));
    fs.writeFileSync(path.join(emptyDir, 'conf', 'a'), 'config');
    fs.writeFileSync(path.join(emptyDir, 'single'), 'one file');
    fs.symlinkSync(outside, path.join(emptyDir, 'escape'));
    fs.symlinkSync('..', path.join(emptyDir, 'up'));
  });

  it('binds a directory and a file subPath at volume-subpaths/<volume>/<container>/<index>', async () => {
    const m = await prepare(
      subPathPod([
        { subPath: 'conf', mountPath: '/conf' },
        { subPath: 'single', mountPath: '/single' },
      ]),
    );
    expect(m[0]!.hostPath).toBe(target('app', 0));
    expect(m[1]!.hostPath).toBe(target('app', 1));
    expect(fs.readFileSync(path.join(m[0]!.hostPath, 'a'), 'utf8')).toBe('config');
    expect(fs.readFileSync(m[1]!.hostPath, 'utf8')).toBe('one file');
    expect(
      mountsUnder(subRoot)
        .map((x) => x.mountPoint)
        .sort(),
    ).toEqual([target('app', 0), target('app', 1)]);
  });

  it('keeps an existing bind on a restart instead of stacking another, and rebinds what changed', async () => {
    await prepare(
      subPathPod([
        { subPath: 'conf', mountPath: '/conf' },
        { subPath: 'single', mountPath: '/single' },
      ]),
    );
    expect(mountsUnder(subRoot)).toHaveLength(2);
    // The subPath now names another directory: the old bind goes, the new one shows it.
    fs.renameSync(path.join(emptyDir, 'conf'), path.join(emptyDir, 'conf-old'));
    fs.mkdirSync(path.join(emptyDir, 'conf'));
    fs.writeFileSync(path.join(emptyDir, 'conf', 'b'), 'new');
    await prepare(
      subPathPod([
        { subPath: 'conf', mountPath: '/conf' },
        { subPath: 'single', mountPath: '/single' },
      ]),
    );
    expect(mountsUnder(subRoot)).toHaveLength(2);
    expect(fs.readdirSync(target('app', 0))).toEqual(['b']);
  });

  it('creates a missing subPath inside the volume, world-writable as the emptyDir', async () => {
    const m = await prepare(subPathPod([{ subPath: 'made/here', mountPath: '/m' }], 'maker'));
    expect(fs.statSync(path.join(emptyDir, 'made', 'here')).mode & 0o777).toBe(0o777);
    expect(fs.statSync(m[0]!.hostPath).ino).toBe(fs.statSync(path.join(emptyDir, 'made', 'here')).ino);
  });

  it.each(['escape', 'escape/keep', 'escape/x', 'up', 'up/other'])(
    'refuses subPath %s, which leads out of the volume, and makes nothing',
    async (subPath) => {
      const before = mountsUnder(subRoot).length;
      const err = await prepare(subPathPod([{ subPath, mountPath: '/x' }], 'victim')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SubPathError);
      expect((err as Error).message).toBe(
        `failed to prepare subPath for volumeMount "data" of container "victim": subPath ${JSON.stringify(subPath)} resolves outside the volume`,
      );
      expect(mountsUnder(subRoot)).toHaveLength(before);
      expect(fs.readdirSync(outside)).toEqual(['keep']);
      expect(fs.readdirSync(path.dirname(emptyDir))).toEqual(['data']);
      expect(fs.readFileSync(path.join(outside, 'keep', 'precious'), 'utf8')).toBe('host file');
    },
  );

  it('follows a symlink that comes back into the volume, as the kubelet does', async () => {
    const m = await prepare(subPathPod([{ subPath: 'up/data/single', mountPath: '/s' }], 'roundabout'));
    expect(fs.readFileSync(m[0]!.hostPath, 'utf8')).toBe('one file');
  });

  it('removePodDirs unmounts the binds first, then removes the pod directory without following the symlinks', async () => {
    expect(mountsUnder(subRoot).length).toBeGreaterThan(0);
    await removePodDirs(subRoot, SUB_UID);
    expect(mountsUnder(subRoot)).toEqual([]);
    expect(fs.existsSync(path.join(subRoot, 'pods', SUB_UID))).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'keep', 'precious'), 'utf8')).toBe('host file');
  });

  it('removePodDirs refuses to cross a mount it did not make, and finishes once it is gone', async () => {
    await prepare(subPathPod([{ mountPath: '/data' }]));
    const foreign = path.join(emptyDir, 'mnt');
    fs.mkdirSync(foreign);
    execFileSync('mount', ['--bind', outside, foreign]);
    const err = await removePodDirs(subRoot, SUB_UID).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PodCleanupError);
    expect((err as PodCleanupError).path).toBe(foreign);
    expect(fs.readFileSync(path.join(outside, 'keep', 'precious'), 'utf8')).toBe('host file');
    execFileSync('umount', [foreign]);
    await removePodDirs(subRoot, SUB_UID);
    expect(fs.existsSync(path.join(subRoot, 'pods', SUB_UID))).toBe(false);
  });
});

describe('pod-managed files', () => {
  it('emptyDir is a world-writable directory under the pod dir', async () => {
    const c = container({ volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] });
    // medium: Memory (a tmpfs, needs root) is in object-volumes.test.ts.
    const p = pod({ spec: { volumes: [{ name: 'scratch', emptyDir: {} }], containers: [c] } });
    const m = await prepareVolumes(p, c, { rootDir });
    const dir = path.join(rootDir, 'pods', UID, 'volumes', 'kubernetes.io~empty-dir', 'scratch');
    expect(m[0]).toMatchObject({ containerPath: '/scratch', hostPath: dir });
    expect(fs.statSync(dir).mode & 0o777).toBe(0o777);
  });

  it('host-network pods get a managed /etc/hosts with header, node hosts and aliases', async () => {
    const c = container();
    const p = pod({
      spec: { hostNetwork: true, hostAliases: [{ ip: '10.1.1.1', hostnames: ['a', 'b'] }], containers: [c] },
    });
    const m = await prepareVolumes(p, c, { rootDir, nodeHostsFile: nodeHosts });
    const hosts = m.find((x) => x.containerPath === '/etc/hosts')!;
    expect(hosts.hostPath).toBe(path.join(rootDir, 'pods', UID, 'etc-hosts'));
    expect(fs.readFileSync(hosts.hostPath, 'utf8')).toBe(
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n10.0.0.1\tnode1\n\n# Entries added by HostAliases.\n10.1.1.1\ta\tb\n',
    );
    expect(fs.statSync(hosts.hostPath).mode & 0o777).toBe(0o644);
  });

  it('no managed /etc/hosts when the container mounts its own', async () => {
    const c = container({ volumeMounts: [{ name: 'h', mountPath: '/etc/hosts' }] });
    const p = pod({
      spec: {
        hostNetwork: true,
        volumes: [{ name: 'h', hostPath: { path: nodeHosts, type: 'File' } }],
        containers: [c],
      },
    });
    const m = await prepareVolumes(p, c, { rootDir, nodeHostsFile: nodeHosts });
    expect(m.filter((x) => x.containerPath === '/etc/hosts')).toEqual([
      expect.objectContaining({ hostPath: nodeHosts }),
    ]);
  });

  it('termination message file: 8 hex chars, 0666, mounted at terminationMessagePath', async () => {
    const c = container({ terminationMessagePath: '/tmp/msg' });
    const m = await prepareVolumes(pod({ spec: { containers: [c] } }), c, { rootDir });
    const t = m.find((x) => x.containerPath === '/tmp/msg')!;
    expect(path.dirname(t.hostPath)).toBe(path.join(rootDir, 'pods', UID, 'containers', 'app'));
    expect(path.basename(t.hostPath)).toMatch(/^[0-9a-f]{8}$/);
    expect(fs.statSync(t.hostPath).mode & 0o777).toBe(0o666);
    // pod-network pod without IPs: no managed /etc/hosts yet
    expect(m.some((x) => x.containerPath === '/etc/hosts')).toBe(false);
  });

  it("a kubeadm pod's several hostPaths: the mounts in the spec's order, one volume mounted twice prepared once", async () => {
    const made = path.join(host, 'kubeadm-pki');
    const c = container({
      terminationMessagePath: '/dev/termination-log',
      volumeMounts: [
        { name: 'certs', mountPath: '/etc/ssl/certs', readOnly: true },
        { name: 'pki', mountPath: '/etc/kubernetes/pki' },
        { name: 'conf', mountPath: '/etc/kubernetes/admin.conf', readOnly: true },
        { name: 'pki', mountPath: '/pki-again' },
      ],
    });
    const p = pod({
      spec: {
        hostNetwork: true,
        volumes: [
          { name: 'certs', hostPath: { path: path.join(host, 'dir'), type: 'DirectoryOrCreate' } },
          { name: 'pki', hostPath: { path: made, type: 'DirectoryOrCreate' } },
          { name: 'conf', hostPath: { path: path.join(host, 'file'), type: 'FileOrCreate' } },
        ],
        containers: [c],
      },
    });
    const m = await prepareVolumes(p, c, { rootDir, nodeHostsFile: nodeHosts });
    expect(m.map((x) => [x.containerPath, x.hostPath])).toEqual([
      ['/etc/ssl/certs', path.join(host, 'dir')],
      ['/etc/kubernetes/pki', made],
      ['/etc/kubernetes/admin.conf', path.join(host, 'file')],
      ['/pki-again', made],
      ['/etc/hosts', path.join(rootDir, 'pods', UID, 'etc-hosts')],
      [
        '/dev/termination-log',
        expect.stringContaining(path.join(rootDir, 'pods', UID, 'containers', 'app')) as unknown as string,
      ],
    ]);
    expect(fs.statSync(made).isDirectory()).toBe(true);
  });

  it('with several failing mounts, the error is the first in the spec and no termination-message file is left', async () => {
    const c = container({
      name: 'twofail',
      terminationMessagePath: '/dev/termination-log',
      volumeMounts: [
        { name: 'ok', mountPath: '/ok' },
        { name: 'first', mountPath: '/first' },
        { name: 'second', mountPath: '/second' },
      ],
    });
    const p = pod({
      spec: {
        volumes: [
          { name: 'ok', hostPath: { path: host, type: 'Directory' } },
          // Both fail, whichever settles first: the error is the first mount's.
          { name: 'first', hostPath: { path: path.join(host, 'missing-first'), type: 'Directory' } },
          { name: 'second', hostPath: { path: host, type: 'Whatever' } },
        ],
        containers: [c],
      },
    });
    const err = await prepareVolumes(p, c, { rootDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VolumeError);
    expect((err as VolumeError).message).toContain('missing-first');
    expect(fs.existsSync(path.join(rootDir, 'pods', UID, 'containers', 'twofail'))).toBe(false);
  });

  it('unsupported volume types are refused clearly', async () => {
    const c = container({ volumeMounts: [{ name: 's', mountPath: '/s' }] });
    const p = pod({ spec: { volumes: [{ name: 's', nfs: { server: 'nfs.example', path: '/x' } }], containers: [c] } });
    await expect(prepareVolumes(p, c, { rootDir })).rejects.toThrow(
      'volume "s": volume type nfs is not supported for static pods by bootlet',
    );
  });

  it('removePodDirs removes the whole pod directory', async () => {
    expect(fs.existsSync(path.join(rootDir, 'pods', UID))).toBe(true);
    await removePodDirs(rootDir, UID);
    expect(fs.existsSync(path.join(rootDir, 'pods', UID))).toBe(false);
    await expect(removePodDirs(rootDir, '..')).rejects.toThrow(UnsafePathComponentError);
    await expect(removePodDirs(rootDir, '../../../../ESCAPED/evil')).rejects.toThrow(
      'invalid pod uid "../../../../ESCAPED/evil": not usable as a path component',
    );
    // the host directories it never owned are untouched
    expect(execFileSync('ls', [host], { encoding: 'utf8' })).toContain('file');
  });
});
