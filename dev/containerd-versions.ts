// Which containerd a private instance runs: the machine's 1.6 (Debian 12), Debian trixie's 1.7 or
// Debian sid's 2.1, the last two fetched with dev/debian-packages.ts and run from where they were
// unpacked (never installed). Tests, bench and `npm run up` pick one with `version` of
// startContainerd, or for a whole run with BOOTLET_TEST_CONTAINERD.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cachedDebianPackage, fetchDebianPackages, type DebianSuite } from './debian-packages.js';

export const CONTAINERD_VERSIONS = ['1.6', '1.7', '2.1'] as const;
export type ContainerdVersion = (typeof CONTAINERD_VERSIONS)[number];

/** The runc every version runs by default: bookworm's 1.1.5 (sid's 1.3 needs a newer glibc). */
export const MACHINE_RUNC = '/usr/sbin/runc';

export interface ContainerdRelease {
  version: ContainerdVersion;
  /** The Debian package's version, e.g. `2.1.9~ds1-5`, or the machine's. */
  packageVersion: string;
  /** The daemon, `ctr`, and the directory holding `containerd-shim-runc-v2` (put first on the daemon's PATH). */
  containerd: string;
  ctr: string;
  binDir: string;
  /** 2 for 1.x, 3 for 2.x. */
  configVersion: 2 | 3;
}

/** Where each version comes from: the machine, or a Debian suite's `containerd` package. */
const SOURCES: Record<ContainerdVersion, { suite: DebianSuite } | 'machine'> = {
  '1.6': 'machine',
  '1.7': { suite: 'trixie' },
  '2.1': { suite: 'sid' },
};

export const CONTAINERD_VERSION_ENV = 'BOOTLET_TEST_CONTAINERD';

/** The version a start without `version` runs: BOOTLET_TEST_CONTAINERD, else 1.6. */
export function defaultContainerdVersion(env: NodeJS.ProcessEnv = process.env): ContainerdVersion {
  const wanted = env[CONTAINERD_VERSION_ENV];
  if (wanted === undefined || wanted === '') return '1.6';
  if (!isContainerdVersion(wanted))
    throw new Error(`${CONTAINERD_VERSION_ENV}=${wanted}: expected one of ${CONTAINERD_VERSIONS.join(', ')}`);
  return wanted;
}

export function isContainerdVersion(v: string): v is ContainerdVersion {
  return (CONTAINERD_VERSIONS as readonly string[]).includes(v);
}

const resolved = new Map<ContainerdVersion, Promise<ContainerdRelease>>();

/**
 * The binaries of a version. A Debian package already unpacked for that minor is used as it is (no
 * apt); otherwise the suite's current package is fetched, and refused when the suite has moved to
 * another minor (a new containerd is a change to make on purpose, not by a mirror's update).
 */
export function containerdRelease(version: ContainerdVersion): Promise<ContainerdRelease> {
  let p = resolved.get(version);
  if (!p) {
    p = resolve(version);
    resolved.set(version, p);
    p.catch(() => resolved.delete(version));
  }
  return p;
}

async function resolve(version: ContainerdVersion): Promise<ContainerdRelease> {
  const source = SOURCES[version];
  if (source === 'machine') {
    const containerd = '/usr/bin/containerd';
    if (!fs.existsSync(containerd)) throw new Error(`containerd ${version} is the machine's: ${containerd} is missing`);
    return {
      version,
      packageVersion: 'machine',
      containerd,
      ctr: '/usr/bin/ctr',
      binDir: '/usr/bin',
      configVersion: 2,
    };
  }
  const prefix = `${version}.`;
  const pkg =
    cachedDebianPackage(source.suite, 'containerd', prefix) ??
    (await fetchDebianPackages(source.suite, ['containerd']))[0];
  if (!pkg) throw new Error(`Debian ${source.suite}: no containerd package`);
  if (!pkg.version.startsWith(prefix))
    throw new Error(
      `Debian ${source.suite}'s containerd is now ${pkg.version}, not ${version}: give dev/containerd-versions.ts the new version`,
    );
  const binDir = path.join(pkg.root, 'usr', 'bin');
  return {
    version,
    packageVersion: pkg.version,
    containerd: path.join(binDir, 'containerd'),
    ctr: path.join(binDir, 'ctr'),
    binDir,
    configVersion: version.startsWith('1.') ? 2 : 3,
  };
}
