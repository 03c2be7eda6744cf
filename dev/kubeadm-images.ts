// Images under the names kubeadm's control-plane manifests use (registry.k8s.io/etcd:<tag>,
// registry.k8s.io/kube-apiserver:<version>, ...), built from this machine's binaries since no
// registry is reachable and no Kubernetes binaries are installed:
// - etcd: Debian's real etcd 3.4 behind a shim that maps the flags of newer etcd and answers the
//   /livez and /readyz probes from 3.4's /health (kubeadm-images/etcd-shim.sh says exactly what).
// - kube-apiserver, kube-controller-manager, kube-scheduler: one busybox + openssl stand-in
//   (kubeadm-images/kube-standin.sh) serving HTTPS on the component's secure port.
// Every name of a kind points at the same manifest, imported once.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PrivateContainerd } from './containerd.js';
import {
  builderDigest,
  busyboxRecipe,
  dir,
  file,
  hostFile,
  inputsDigest,
  libraryEntries,
  need,
  PATH_ENV,
  sharedLibraries,
  type Recipe,
} from './images.js';
import { ociArchitecture, writeOciImage } from './oci-image.js';
import { IMAGE_CACHE } from './paths.js';
import type { TarEntry } from './tar.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPTS = path.join(HERE, 'kubeadm-images');

export type KubeadmImageKind = 'etcd' | 'standin';

/** The name each kind is built under; kubeadm's names are aliases of it. */
export const KUBEADM_IMAGES: Record<KubeadmImageKind, string> = {
  etcd: 'bootlet.local/kubeadm-etcd:3.4',
  standin: 'bootlet.local/kube-standin:1',
};

const STANDIN_COMPONENTS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

/** Which image stands behind a reference from a kubeadm manifest, or undefined for another one. */
export function kubeadmImageKind(ref: string): KubeadmImageKind | undefined {
  const m = /^registry\.k8s\.io\/([a-z-]+):[A-Za-z0-9._-]+$/.exec(ref);
  if (!m) return undefined;
  if (m[1] === 'etcd') return 'etcd';
  return STANDIN_COMPONENTS.includes(m[1]!) ? 'standin' : undefined;
}

function script(name: string, dest: string): TarEntry {
  return file(dest, fs.readFileSync(path.join(SCRIPTS, name)), 0o755);
}

async function etcdRecipe(): Promise<Recipe> {
  const base = await busyboxRecipe();
  const etcd = await need('etcd', 'etcd-server');
  const libs = await sharedLibraries(etcd);
  return {
    files: [
      ...base.files,
      hostFile(etcd, 'usr/local/lib/etcd/etcd', 0o755),
      script('etcd-shim.sh', 'usr/local/bin/etcd'),
      script('probe-bridge.sh', 'usr/local/lib/etcd/probe-bridge'),
      ...libraryEntries(libs),
      dir('var/lib/etcd', 0o700),
    ],
    config: { Cmd: ['etcd'], Env: [PATH_ENV], WorkingDir: '/' },
    inputs: [...base.inputs, etcd, ...libs],
    extraKey: base.extraKey,
  };
}

async function standinRecipe(): Promise<Recipe> {
  const base = await busyboxRecipe();
  const openssl = await need('openssl', 'openssl');
  const libs = await sharedLibraries(openssl);
  return {
    files: [
      ...base.files,
      hostFile(openssl, 'usr/bin/openssl', 0o755),
      ...libraryEntries(libs),
      // Enough for `openssl req` (OpenSSL 3 refuses to run it without a config file).
      file('usr/lib/ssl/openssl.cnf', '[req]\ndistinguished_name = dn\n[dn]\n'),
      script('kube-standin.sh', 'usr/local/bin/kube-standin'),
      ...STANDIN_COMPONENTS.map((c): TarEntry => ({
        type: 'symlink',
        path: `usr/local/bin/${c}`,
        target: 'kube-standin',
      })),
    ],
    config: { Cmd: ['kube-apiserver'], Env: [PATH_ENV], WorkingDir: '/' },
    inputs: [...base.inputs, openssl, ...libs],
    extraKey: base.extraKey,
  };
}

function scriptsDigest(): string {
  const h = createHash('sha256');
  for (const f of fs.readdirSync(SCRIPTS).sort()) h.update(f).update(fs.readFileSync(path.join(SCRIPTS, f)));
  return h.digest('hex');
}

/** Sorts kubeadm's references by kind; a reference of no known kind is an error naming it. */
export function groupKubeadmImages(refs: string[]): Record<KubeadmImageKind, string[]> {
  const out: Record<KubeadmImageKind, string[]> = { etcd: [], standin: [] };
  for (const ref of [...new Set(refs)].sort()) {
    const kind = kubeadmImageKind(ref);
    if (!kind) throw new Error(`no test image stands in for ${ref}`);
    out[kind].push(ref);
  }
  return out;
}

/**
 * Builds (cached under .tmp/images, keyed by host binaries, scripts and names) an OCI tarball per
 * kind that carries `refs` as extra names.
 */
export async function buildKubeadmImages(
  refs: string[],
  outDir: string = IMAGE_CACHE,
): Promise<Record<KubeadmImageKind, string>> {
  fs.mkdirSync(outDir, { recursive: true });
  const architecture = ociArchitecture();
  const builder = builderDigest(['kubeadm-images.ts']) + scriptsDigest();
  const grouped = groupKubeadmImages(refs);
  const recipes: Record<KubeadmImageKind, () => Promise<Recipe>> = { etcd: etcdRecipe, standin: standinRecipe };
  const out = {} as Record<KubeadmImageKind, string>;
  for (const kind of Object.keys(recipes) as KubeadmImageKind[]) {
    const recipe = await recipes[kind]();
    const key = createHash('sha256')
      .update(builder)
      .update(architecture)
      .update(inputsDigest(recipe.inputs))
      .update(recipe.extraKey)
      .update(grouped[kind].join(','))
      .digest('hex')
      .slice(0, 16);
    const tarball = path.join(outDir, `kubeadm-${kind}-${key}.oci.tar`);
    if (!fs.existsSync(tarball)) {
      writeOciImage(
        {
          name: KUBEADM_IMAGES[kind],
          aliases: grouped[kind],
          files: recipe.files,
          config: recipe.config,
          architecture,
        },
        tarball,
      );
      for (const f of fs.readdirSync(outDir)) {
        if (f.startsWith(`kubeadm-${kind}-`) && f.endsWith('.oci.tar') && path.join(outDir, f) !== tarball)
          fs.rmSync(path.join(outDir, f), { force: true });
      }
    }
    out[kind] = tarball;
  }
  return out;
}

/** Builds and imports into a private containerd's k8s.io namespace the images behind `refs`. */
export async function importKubeadmImages(c: PrivateContainerd, refs: string[]): Promise<void> {
  const tarballs = await buildKubeadmImages(refs);
  for (const tarball of Object.values(tarballs)) {
    await c.ctr(
      ['images', 'import', '--snapshotter', c.snapshotter, '--platform', `linux/${ociArchitecture()}`, tarball],
      { timeoutMs: 300_000 },
    );
  }
  const listed = (await c.ctr(['images', 'ls', '-q'])).split('\n');
  const missing = refs.filter((r) => !listed.includes(r));
  if (missing.length > 0) throw new Error(`images missing after import: ${missing.join(', ')}`);
}
