// `npm run package` gives a .deb that installs, answers as bootlet and as the kubelet, enables
// bootlet.service under the kubelet.service alias, and purges without a trace. No service is
// started (policy-rc.d says no, as on a build machine), and whatever happens the package is purged
// and no unit is left enabled.
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '../../..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
// The Node the executable carries: the pinned package build/build.mjs takes it from.
const CARRIED_NODE = (
  JSON.parse(
    fs.readFileSync(path.join(ROOT, 'node_modules', `node-linux-${process.arch}`, 'package.json'), 'utf8'),
  ) as { version: string }
).version;
const POLICY = '/usr/sbin/policy-rc.d';
const LEFTOVERS = [
  '/etc/systemd/system/kubelet.service',
  '/etc/systemd/system/multi-user.target.wants/bootlet.service',
  '/var/lib/systemd/deb-systemd-helper-enabled/bootlet.service.dsh-also',
];

function installed(pkg: string): boolean {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Status}', pkg], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).includes('install ok installed');
  } catch {
    return false;
  }
}

/** Why this machine must not get the package, or undefined. */
function unsafe(): string | undefined {
  if (process.getuid?.() !== 0) return 'dpkg -i needs root';
  if (installed('kubelet')) return 'the kubelet package is installed here';
  if (installed('bootlet')) return 'a bootlet package is already installed here';
  if (fs.existsSync('/usr/bin/kubelet')) return '/usr/bin/kubelet exists and would be replaced';
  return undefined;
}

const why = unsafe();
let deb = '';
let addedPolicy = false;

async function purge(): Promise<void> {
  await run('dpkg', ['--purge', 'bootlet']).catch(() => undefined);
}

beforeAll(async () => {
  if (why) return;
  const { stdout } = await run('node', [path.join(ROOT, 'build/package.mjs')], { cwd: ROOT, maxBuffer: 1 << 20 });
  deb = /built (\S+\.deb)/.exec(stdout)?.[1] ?? '';
  if (!fs.existsSync(POLICY)) {
    fs.writeFileSync(POLICY, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    addedPolicy = true;
  }
}, 300_000);

afterAll(async () => {
  if (why) return;
  if (installed('bootlet')) await purge();
  // Never leave a unit enabled, whatever the scripts did.
  for (const f of LEFTOVERS) fs.rmSync(f, { force: true });
  if (addedPolicy) fs.rmSync(POLICY, { force: true });
}, 120_000);

describe.skipIf(why !== undefined)('the Debian package', () => {
  it(`is named bootlet_${VERSION}_<arch>.deb and declares itself the kubelet's replacement`, async () => {
    const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
    expect(path.basename(deb)).toBe(`bootlet_${VERSION}_${arch}.deb`);
    const { stdout } = await run('dpkg-deb', ['-f', deb, 'Package', 'Provides', 'Conflicts', 'Replaces']);
    expect(stdout).toContain('Package: bootlet');
    expect(stdout).toMatch(/Provides: kubelet \(= 1\.\d+\.\d+\)/);
    expect(stdout).toContain('Conflicts: kubelet');
    expect(stdout).toContain('Replaces: kubelet');
  });

  it('installs its files, answers as bootlet and as the kubelet, and is enabled under the kubelet.service alias', async () => {
    await run('dpkg', ['-i', deb]);
    expect(installed('bootlet')).toBe(true);
    expect(fs.statSync('/usr/bin/bootlet').mode & 0o777).toBe(0o755);
    expect(fs.readlinkSync('/usr/bin/kubelet')).toBe('bootlet');
    for (const f of [
      '/lib/systemd/system/bootlet.service',
      '/lib/systemd/system/bootlet.service.d/20-kubeadm-env.conf',
      '/etc/default/bootlet',
    ])
      expect(fs.existsSync(f), f).toBe(true);
    expect((await run('/usr/bin/bootlet', ['version'])).stdout).toBe(
      `bootlet v${VERSION} (kubelet v1.36.0, node v${CARRIED_NODE})\n`,
    );
    // kubeadm's preflight runs `kubelet --version`.
    expect((await run('kubelet', ['--version'], { env: { PATH: '/usr/bin:/bin' } })).stdout).toMatch(
      /^Kubernetes v1\.36\.0\+bootlet\./,
    );
    expect(fs.readlinkSync('/etc/systemd/system/kubelet.service')).toBe('/lib/systemd/system/bootlet.service');
    expect(fs.existsSync('/etc/systemd/system/multi-user.target.wants/bootlet.service')).toBe(true);
    const verify = await run('systemd-analyze', ['verify', '/lib/systemd/system/bootlet.service']).then(
      (r) => r.stderr,
      (e: { stderr: string }) => e.stderr,
    );
    expect(
      verify.split('\n').filter((l) => l.includes('bootlet') && !/network-online|containerd|crio/.test(l)),
    ).toEqual([]);
  }, 120_000);

  it('purges to nothing: no files, no enabled unit, no alias', async () => {
    await purge();
    expect(installed('bootlet')).toBe(false);
    for (const f of [
      '/usr/bin/bootlet',
      '/usr/bin/kubelet',
      '/lib/systemd/system/bootlet.service',
      '/etc/default/bootlet',
      ...LEFTOVERS,
    ]) {
      expect(fs.existsSync(f) || fs.lstatSync(f, { throwIfNoEntry: false }) !== undefined, f).toBe(false);
    }
  }, 120_000);
});
