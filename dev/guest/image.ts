// The test node's disk: a Debian 12 root file system made by mmdebstrap from Debian's packages
// (systemd as init, dbus, udev, the distribution kernel, bookworm's runc, sid's containerd 2.x
// installed with dpkg -i) and written into an ext4 image with `mkfs.ext4 -d`, with the kernel and
// initrd beside it for qemu's -kernel/-initrd. Built once and cached by its package list and the
// plumbing that goes into it (customize.sh, agent.py): a change of either builds a new one.
//
// `npx tsx dev/guest/image.ts` builds (or finds) it and prints where it is.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchDebianPackages, machineDebianMirror } from '../debian-packages.js';
import { run } from '../exec.js';
import { mountsUnder, unmountAllUnder } from '../mounts.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Debian 12's packages of the node: what a minimal cloud image of it boots with, plus runc. */
export const GUEST_PACKAGES = [
  'systemd',
  'systemd-sysv',
  'dbus',
  'udev',
  'linux-image-amd64',
  'kmod',
  'iproute2',
  'procps',
  'runc',
  'python3',
];
/** Packages of another suite, installed with dpkg -i over the bookworm system. */
export const GUEST_SID_PACKAGES = ['containerd'];
const SUITE = 'bookworm';
/** The ext4 image's size: sparse, so only what is written takes room. */
const DISK_SIZE = '6G';

export interface GuestImage {
  dir: string;
  /** The root file system (ext4, raw): qemu boots a qcow2 overlay of it, never the file itself. */
  disk: string;
  kernel: string;
  initrd: string;
  /** `dpkg-query -W` of the image: name and version of every package. */
  packages: ReadonlyMap<string, string>;
}

export function guestCacheDir(): string {
  return process.env.BOOTLET_GUEST_CACHE ?? path.join(homedir(), '.cache', 'bootlet', 'guest-images');
}

function readPackages(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [name, version] = line.split('\t');
    if (name && version) out.set(name, version);
  }
  return out;
}

function imageAt(dir: string): GuestImage {
  return {
    dir,
    disk: path.join(dir, 'root.ext4'),
    kernel: path.join(dir, 'vmlinuz'),
    initrd: path.join(dir, 'initrd.img'),
    packages: readPackages(path.join(dir, 'packages.tsv')),
  };
}

/**
 * The cached image for the current package list, built first when there is none (about 4-5 min:
 * mmdebstrap, the initramfs, mkfs). Two processes building at once take turns (flock).
 */
export async function guestImage(log: (line: string) => void = () => undefined): Promise<GuestImage> {
  const [containerd] = await fetchDebianPackages('sid', GUEST_SID_PACKAGES);
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        suite: SUITE,
        packages: GUEST_PACKAGES,
        sid: [`${containerd!.name}=${containerd!.version}`],
        customize: readFileSync(path.join(HERE, 'customize.sh'), 'utf8'),
        agent: readFileSync(path.join(HERE, 'agent.py'), 'utf8'),
        disk: DISK_SIZE,
      }),
    )
    .digest('hex')
    .slice(0, 16);
  const cache = guestCacheDir();
  const dir = path.join(cache, key);
  mkdirSync(cache, { recursive: true });
  if (existsSync(path.join(dir, '.complete'))) return imageAt(dir);
  // One build at a time on the machine; the one that waited finds the image done.
  await run(
    'flock',
    [
      '-w',
      '1800',
      path.join(cache, '.lock'),
      process.execPath,
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      '--build-locked',
      key,
    ],
    { timeoutMs: 1_900_000, env: { ...process.env, BOOTLET_GUEST_CONTAINERD_DEB: containerd!.deb } },
  );
  if (!existsSync(path.join(dir, '.complete'))) throw new Error(`guest image ${dir} was not built`);
  log(`guest image built: ${dir}`);
  return imageAt(dir);
}

/**
 * mmdebstrap's root mode mounts /proc, /sys and /dev into the tree while it works; a build that was
 * killed leaves them there, and a recursive removal must never walk into the host's /dev.
 */
async function removeBuildDir(dir: string): Promise<void> {
  const left = await unmountAllUnder(dir);
  if (left.length > 0 || mountsUnder(dir).length > 0)
    throw new Error(`cannot remove ${dir}: still mounted there: ${mountsUnder(dir).join(' ')}`);
  rmSync(dir, { recursive: true, force: true });
}

/** The build itself, under the lock: into a partial directory, renamed when whole. */
async function buildLocked(key: string, containerdDeb: string): Promise<void> {
  const cache = guestCacheDir();
  const dir = path.join(cache, key);
  if (existsSync(path.join(dir, '.complete'))) return;
  const partial = `${dir}.partial`;
  await removeBuildDir(partial);
  const rootfs = path.join(partial, 'rootfs');
  mkdirSync(partial, { recursive: true });
  const started = Date.now();
  const mirror = machineDebianMirror();
  await run(
    'mmdebstrap',
    [
      '--mode=root',
      '--variant=apt',
      '--format=directory',
      `--include=${GUEST_PACKAGES.join(',')}`,
      '--aptopt=Acquire::Languages "none"',
      '--dpkgopt=path-exclude=/usr/share/{doc,man,locale,info}/*',
      `--customize-hook=sh ${path.join(HERE, 'customize.sh')} "$1" ${path.join(HERE, 'agent.py')} ${containerdDeb}`,
      SUITE,
      rootfs,
      `deb ${mirror} ${SUITE} main`,
    ],
    { timeoutMs: 1_500_000 },
  );
  const boot = readdirSync(path.join(rootfs, 'boot'));
  const kernel = boot.find((f) => f.startsWith('vmlinuz-'));
  const initrd = boot.find((f) => f.startsWith('initrd.img-'));
  if (!kernel || !initrd) throw new Error(`mmdebstrap left no kernel or initrd in ${rootfs}/boot: ${boot.join(' ')}`);
  await run('cp', [path.join(rootfs, 'boot', kernel), path.join(partial, 'vmlinuz')]);
  await run('cp', [path.join(rootfs, 'boot', initrd), path.join(partial, 'initrd.img')]);
  const packages = await run('chroot', [rootfs, 'dpkg-query', '-W', '-f', '${Package}\t${Version}\n']);
  writeFileSync(path.join(partial, 'packages.tsv'), packages);
  await run('mkfs.ext4', ['-q', '-L', 'bootlet-root', '-d', rootfs, path.join(partial, 'root.ext4'), DISK_SIZE], {
    timeoutMs: 600_000,
  });
  await removeBuildDir(rootfs);
  writeFileSync(
    path.join(partial, '.complete'),
    `built ${new Date().toISOString()} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  renameSync(partial, dir);
  // Older images (another package list) go: each is a few hundred MB.
  for (const old of readdirSync(cache)) {
    if (old !== key && !old.startsWith('.')) await removeBuildDir(path.join(cache, old));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--build-locked') {
    await buildLocked(process.argv[3]!, process.env.BOOTLET_GUEST_CONTAINERD_DEB!);
  } else {
    const image = await guestImage(console.log);
    console.log(
      `${image.dir}\n  kernel ${image.packages.get('linux-image-amd64')}, systemd ${image.packages.get('systemd')}, containerd ${image.packages.get('containerd')}`,
    );
  }
}
