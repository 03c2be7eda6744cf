// `npm run package`: bootlet_<version>_<arch>.deb in build/out/, built with dpkg-deb from the
// single executable (build/bootlet) and packaging/: the unit, the kubeadm drop-in, /etc/default,
// and the maintainer scripts. It conflicts with, replaces and provides the kubelet package, and
// installs /usr/bin/kubelet as a link to bootlet: kubeadm runs `kubelet --version` in preflight,
// and kubeadm's own drop-in starts /usr/bin/kubelet.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const exe = join(root, 'build', 'bootlet');
if (!existsSync(exe)) throw new Error(`${exe} is missing: run node build/build.mjs first`);

const version = pkg.version;
const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
// The Kubernetes version bootlet implements (src/version.ts), for Provides: kubelet (= ...).
const kubernetes = /KUBERNETES_VERSION\s*=\s*'v?([0-9.]+)'/.exec(
  readFileSync(join(root, 'src', 'version.ts'), 'utf8'),
)?.[1];
if (!kubernetes) throw new Error('cannot find KUBERNETES_VERSION in src/version.ts');

const out = join(root, 'build', 'out');
const stage = join(out, 'deb', `bootlet_${version}_${arch}`);
rmSync(stage, { recursive: true, force: true });

function put(rel, from, mode = 0o644) {
  const to = join(stage, rel);
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
  chmodSync(to, mode);
}

const p = (...parts) => join(root, 'packaging', ...parts);
put('usr/bin/bootlet', exe, 0o755);
symlinkSync('bootlet', join(stage, 'usr/bin/kubelet'));
// Debian 12 keeps packaged units in /lib/systemd/system (merged /usr, but dpkg tracks the path).
put('lib/systemd/system/bootlet.service', p('systemd', 'bootlet.service'));
put(
  'lib/systemd/system/bootlet.service.d/20-kubeadm-env.conf',
  p('systemd', 'bootlet.service.d', '20-kubeadm-env.conf'),
);
put('etc/default/bootlet', p('default', 'bootlet'));
put('usr/share/doc/bootlet/README.md', join(root, 'README.md'));
for (const script of ['postinst', 'prerm', 'postrm']) put(`DEBIAN/${script}`, p('debian', script), 0o755);
writeFileSync(join(stage, 'DEBIAN', 'conffiles'), '/etc/default/bootlet\n');

function sizeKiB(dir) {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const f = join(dir, e.name);
    if (e.isDirectory()) total += e.name === 'DEBIAN' ? 0 : sizeKiB(f) * 1024;
    else if (e.isFile()) total += statSync(f).size;
  }
  return Math.ceil(total / 1024);
}

// What the executable links against (Node's own runtime libraries).
const control = `Package: bootlet
Version: ${version}
Architecture: ${arch}
Maintainer: bootlet developers <bootlet@localhost>
Section: admin
Priority: optional
Installed-Size: ${sizeKiB(stage)}
Depends: libc6 (>= 2.28), libstdc++6 (>= 8), libgcc-s1
Recommends: containerd | cri-o, systemd
Provides: kubelet (= ${kubernetes})
Conflicts: kubelet
Replaces: kubelet
Description: static-pod node agent, a kubelet replacement for control-plane static pods
 bootlet runs the Pod manifests in /etc/kubernetes/manifests through the Container Runtime
 Interface (containerd, CRI-O) and mirrors them to the API server once there is one. It takes
 the kubelet's flags and KubeletConfiguration, so kubeadm starts it where it would start the
 kubelet: the package installs bootlet.service with the alias kubelet.service and a drop-in that
 reads kubeadm's kubelet environment files.
`;
writeFileSync(join(stage, 'DEBIAN', 'control'), control);

const deb = join(out, `bootlet_${version}_${arch}.deb`);
execFileSync('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', stage, deb], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
console.log(`built ${deb} (${Math.round(statSync(deb).size / 1024)} KiB)`);
