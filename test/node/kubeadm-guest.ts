// A kubeadm control-plane node inside the booted guest, made as `kubeadm init` and an operator
// would make it, from files the host puts into the guest's share:
// - containerd configured as kubeadm documents it: `containerd config default`, then
//   SystemdCgroup = true (config version 3 for containerd 2.x), and the locally built images
//   imported (no registry: the sandbox image of the default config is the test's pause);
// - bootlet's own .deb installed with dpkg -i;
// - kubeadm's files of a version (test/fixtures/kubeadm/<v>/): the drop-in where kubeadm's
//   package puts it, the PKI and kubeconfigs, config.yaml and kubeadm-flags.env, the manifests.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTestImages } from '../../dev/images.js';
import { buildKubeadmImages } from '../../dev/kubeadm-images.js';
import { GUEST_SHARE, type GuestNode } from '../../dev/guest/guest-node.js';
import { writeKubeadmPki } from '../support/kubeadm-pki.js';
import { KUBEADM_NODE } from '../support/kubeadm-node.js';
import { KUBEADM_VERSIONS, type KubeadmVersion } from '../support/kubeadm-versions.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = path.join(REPO, 'test', 'fixtures', 'kubeadm');

/** Where kubeadm's deb package puts its drop-in (it applies to bootlet through the kubelet.service alias). */
export const KUBEADM_DROPIN = '/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf';

const NODE_ADDRESS_UNIT = `[Unit]
Description=The node's advertise address
DefaultDependencies=no
Before=containerd.service bootlet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/sbin/ip addr replace ${KUBEADM_NODE.advertiseAddress}/32 dev lo

[Install]
WantedBy=multi-user.target
`;

/** The .deb `npm run package` made. */
export function bootletDeb(): string {
  const out = path.join(REPO, 'build', 'out');
  const deb = existsSync(out) ? readdirSync(out).find((f) => /^bootlet_.*\.deb$/.test(f)) : undefined;
  if (!deb) throw new Error(`no bootlet_*.deb in ${out}: run npm run package first`);
  return path.join(out, deb);
}

/** The image references every corpus version's manifests name. */
function kubeadmRefs(): string[] {
  const refs = new Set<string>();
  for (const v of KUBEADM_VERSIONS) {
    for (const f of readdirSync(path.join(FIXTURES, v, 'manifests'))) {
      const m = /image: (\S+)/.exec(readFileSync(path.join(FIXTURES, v, 'manifests', f), 'utf8'));
      if (m) refs.add(m[1]!);
    }
  }
  return [...refs];
}

/** Puts the .deb, the images, the PKI and the corpus into the share. */
export async function fillShare(g: GuestNode): Promise<void> {
  g.put(bootletDeb(), 'bootlet.deb');
  const test = await buildTestImages();
  const kubeadm = await buildKubeadmImages(kubeadmRefs());
  for (const [name, tarball] of [...Object.entries(test), ...Object.entries(kubeadm)])
    g.put(tarball, `images/${name}.tar`);
  const kubernetes = path.join(g.share, 'kubernetes');
  mkdirSync(kubernetes, { recursive: true });
  await writeKubeadmPki(kubernetes, {
    nodeName: KUBEADM_NODE.name,
    advertiseAddress: KUBEADM_NODE.advertiseAddress,
    serviceIP: KUBEADM_NODE.serviceIP,
    dnsDomain: KUBEADM_NODE.dnsDomain,
    server: `https://${KUBEADM_NODE.advertiseAddress}:6443`,
  });
  for (const v of KUBEADM_VERSIONS) {
    for (const sub of ['kubelet', 'manifests']) {
      for (const f of readdirSync(path.join(FIXTURES, v, sub)))
        g.put(path.join(FIXTURES, v, sub, f), `kubeadm/${v}/${sub}/${f}`);
    }
  }
}

/**
 * The node before bootlet: its name is kubeadm's (the corpus's hostname), the advertise address
 * on lo, containerd configured and its images in.
 */
export async function prepareNode(g: GuestNode): Promise<{ sandboxImage: string }> {
  // The advertise address is on lo at every boot, as a real node's network configuration gives it its address.
  await g.sh('install -m 0644 /dev/stdin /etc/systemd/system/node-address.service', { input: NODE_ADDRESS_UNIT });
  await g.sh(`hostname ${KUBEADM_NODE.name}; echo ${KUBEADM_NODE.name} >/etc/hostname
    systemctl enable --now node-address.service
    # No systemd-resolved here: kubeadm would not have written resolvConf (the kubelet's default file is read).
    [ -s /etc/resolv.conf ] || echo 'nameserver 127.0.0.53' >/etc/resolv.conf`);
  const out = await g.sh(
    `containerd config default >/etc/containerd/config.toml
    sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' /etc/containerd/config.toml
    grep -q '^version = 3' /etc/containerd/config.toml
    grep -q 'SystemdCgroup = true' /etc/containerd/config.toml
    systemctl restart containerd
    for t in ${GUEST_SHARE}/images/*.tar; do ctr -n k8s.io images import --platform linux/amd64 "$t" >/dev/null; done
    sed -n "s/^ *sandbox = '\\(.*\\)'$/\\1/p" /etc/containerd/config.toml`,
    { timeoutMs: 900_000 },
  );
  const sandboxImage = out.trim();
  if (!sandboxImage) throw new Error('no sandbox image in containerd 2.x default config');
  await g.sh(`ctr -n k8s.io images tag --force bootlet.local/pause:3.10 ${sandboxImage} >/dev/null`);
  return { sandboxImage };
}

/**
 * kubeadm's files of `v`, as `kubeadm init` leaves them, and /etc/default/kubelet with the
 * operator's overrides. `config` sets top-level KubeletConfiguration fields (an operator's edit).
 */
export async function installKubeadmFiles(
  g: GuestNode,
  v: KubeadmVersion,
  o: { extraArgs?: string[]; config?: Record<string, string> } = {},
): Promise<void> {
  const src = `${GUEST_SHARE}/kubeadm/${v}`;
  const edits = Object.entries(o.config ?? {})
    .map(([k, val]) => `-e 's/^${k}: .*/${k}: ${val}/'`)
    .join(' ');
  await g.sh(`install -D -m 0644 ${src}/kubelet/10-kubeadm.conf ${KUBEADM_DROPIN}
    mkdir -p /etc/kubernetes/manifests /var/lib/kubelet /var/lib/etcd
    cp -a ${GUEST_SHARE}/kubernetes/. /etc/kubernetes/
    # No systemd-resolved on this node: kubeadm writes resolvConf only where it runs.
    grep -v '^resolvConf:' ${src}/kubelet/config.yaml ${edits ? `| sed ${edits}` : ''} >/var/lib/kubelet/config.yaml
    cp ${src}/kubelet/kubeadm-flags.env /var/lib/kubelet/kubeadm-flags.env
    printf 'KUBELET_EXTRA_ARGS=%s\\n' '${(o.extraArgs ?? []).join(' ')}' >/etc/default/kubelet
    systemctl daemon-reload`);
}

/**
 * The four manifests, written as kubeadm writes them (each file directly, mode 0600). They are staged
 * on the guest's own disk first: kubeadm has the bytes in memory when it truncates the file, while a
 * copy straight from the 9p share left it empty for longer than a writer's pause under TCG, and
 * bootlet (as the kubelet) refuses a file found empty and quiet with an error line.
 */
export async function writeManifests(g: GuestNode, v: KubeadmVersion): Promise<void> {
  await g.sh(
    `stage=$(mktemp -d) && cp ${GUEST_SHARE}/kubeadm/${v}/manifests/*.yaml "$stage"/ && ` +
      `for f in "$stage"/*.yaml; do install -m 0600 "$f" /etc/kubernetes/manifests/; done && rm -rf "$stage"`,
  );
}
