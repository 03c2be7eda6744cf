// The images tests and `npm run up` use, built from binaries on this machine (no registry is
// reachable): a static pause built from C, Debian's busybox-static, Debian's etcd.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PrivateContainerd } from './containerd.js';
import { run } from './exec.js';
import { ociArchitecture, writeOciImage, type ImageConfig } from './oci-image.js';
import { IMAGE_CACHE } from './paths.js';
import type { TarEntry } from './tar.js';

export const TEST_IMAGES = {
  pause: 'bootlet.local/pause:3.10',
  busybox: 'bootlet.local/busybox:1.36',
  etcd: 'bootlet.local/etcd:3.4',
} as const;

export type TestImage = keyof typeof TEST_IMAGES;

export const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const PAUSE_C = `/* bootlet pause: holds the pod's namespaces, reaps orphans, exits 0 on SIGINT/SIGTERM. */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig) { (void)sig; _exit(0); }

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_term;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_handler = on_child;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &sa, NULL);
  for (;;) pause();
  return 0;
}
`;

export const PASSWD = 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n';
export const GROUP = 'root:x:0:\nnobody:x:65534:\n';
export const NSSWITCH = 'passwd: files\ngroup: files\nhosts: files dns\n';

/** Everything that goes into one image, and what its cache key is made of. */
export interface Recipe {
  files: TarEntry[];
  config: ImageConfig;
  /** Host files the layer was made from (their identity goes into the cache key). */
  inputs: string[];
  extraKey: string;
}

export function file(p: string, data: Buffer | string, mode = 0o644): TarEntry {
  return { type: 'file', path: p, mode, data: typeof data === 'string' ? Buffer.from(data) : data };
}
export function dir(p: string, mode = 0o755): TarEntry {
  return { type: 'dir', path: p, mode };
}

export async function which(cmd: string): Promise<string | undefined> {
  for (const d of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin')
    .split(':')
    .concat(['/usr/sbin', '/usr/bin', '/sbin', '/bin'])) {
    const p = path.join(d, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

export async function need(cmd: string, pkg: string): Promise<string> {
  const p = await which(cmd);
  if (!p) throw new Error(`${cmd} not found: install the Debian package ${pkg} (apt-get install -y ${pkg})`);
  return p;
}

export function hostFile(src: string, dest: string, mode?: number): TarEntry {
  const real = fs.realpathSync(src);
  const st = fs.statSync(real);
  return file(dest, fs.readFileSync(real), mode ?? st.mode & 0o7777);
}

/** The shared libraries (and the loader) a dynamic executable needs, as ldd reports them. */
export async function sharedLibraries(binary: string): Promise<string[]> {
  let out: string;
  try {
    out = await run('ldd', [binary], { timeoutMs: 30_000 });
  } catch {
    return []; // "not a dynamic executable": static already
  }
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]!);
  }
  return libs;
}

/** Puts each library at the path ldd names, with the real file behind any symlink. */
export function libraryEntries(libs: string[]): TarEntry[] {
  const out: TarEntry[] = [];
  for (const lib of libs) {
    const real = fs.realpathSync(lib);
    out.push(hostFile(real, real));
    if (real !== lib) out.push({ type: 'symlink', path: lib, target: real });
  }
  return out;
}

async function gccVersion(): Promise<string> {
  return (await run(await need('gcc', 'gcc'), ['--version'], { timeoutMs: 30_000 })).split('\n')[0] ?? '';
}

async function pauseRecipe(cacheDir: string): Promise<Recipe> {
  const gcc = await need('gcc', 'gcc');
  const key = createHash('sha256')
    .update(PAUSE_C)
    .update(await gccVersion())
    .digest('hex')
    .slice(0, 16);
  const binDir = path.join(cacheDir, `pause-bin-${key}`);
  const bin = path.join(binDir, 'pause');
  if (!fs.existsSync(bin)) {
    const tmp = fs.mkdtempSync(path.join(cacheDir, 'pause-build-'));
    try {
      fs.writeFileSync(path.join(tmp, 'pause.c'), PAUSE_C);
      try {
        await run(gcc, ['-static', '-O2', '-s', '-o', path.join(tmp, 'pause'), path.join(tmp, 'pause.c')], {
          timeoutMs: 120_000,
        });
      } catch (e) {
        throw new Error(`building the pause binary failed (needs gcc and libc6-dev): ${(e as Error).message}`);
      }
      fs.mkdirSync(binDir, { recursive: true });
      fs.renameSync(path.join(tmp, 'pause'), bin);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  return {
    files: [hostFile(bin, 'pause', 0o755)],
    config: { Entrypoint: ['/pause'], Env: [PATH_ENV], WorkingDir: '/', StopSignal: 'SIGINT' },
    inputs: [bin],
    extraKey: key,
  };
}

export async function busyboxRecipe(): Promise<Recipe> {
  const busybox = await need('busybox', 'busybox-static');
  const libs = await sharedLibraries(busybox);
  if (libs.length > 0) throw new Error(`${busybox} is dynamically linked: install busybox-static`);
  const applets = (await run(busybox, ['--list'], { timeoutMs: 30_000 }))
    .split('\n')
    .map((s) => s.trim())
    .filter((s) => s && s !== 'busybox' && !s.includes('/'));
  return {
    files: [
      hostFile(busybox, 'bin/busybox', 0o755),
      ...applets.map((a): TarEntry => ({ type: 'symlink', path: `bin/${a}`, target: '/bin/busybox' })),
      file('etc/passwd', PASSWD),
      file('etc/group', GROUP),
      file('etc/nsswitch.conf', NSSWITCH),
      dir('root', 0o700),
      dir('tmp', 0o1777),
      dir('var/www'),
      dir('usr/bin'),
      dir('usr/sbin'),
      dir('sbin'),
    ],
    config: { Cmd: ['sh'], Env: [PATH_ENV], WorkingDir: '/' },
    inputs: [busybox],
    extraKey: applets.join(','),
  };
}

async function etcdRecipe(): Promise<Recipe> {
  const etcd = await need('etcd', 'etcd-server');
  const binaries = [etcd];
  const etcdctl = await which('etcdctl'); // from etcd-client, only when installed
  if (etcdctl) binaries.push(etcdctl);
  const libs = [...new Set((await Promise.all(binaries.map(sharedLibraries))).flat())].sort();
  return {
    files: [
      ...binaries.map((b) => hostFile(b, `usr/local/bin/${path.basename(b)}`, 0o755)),
      ...libraryEntries(libs),
      file('etc/passwd', PASSWD),
      file('etc/group', GROUP),
      file('etc/nsswitch.conf', NSSWITCH),
      dir('tmp', 0o1777),
      dir('var/lib/etcd', 0o700),
    ],
    config: { Cmd: ['etcd'], Env: [PATH_ENV], WorkingDir: '/' },
    inputs: [...binaries, ...libs],
    extraKey: '',
  };
}

/** Our own sources: a change to how images are made must rebuild them. */
export function builderDigest(extra: string[] = []): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const h = createHash('sha256');
  for (const f of ['images.ts', 'oci-image.ts', 'tar.ts', ...extra]) h.update(fs.readFileSync(path.join(here, f)));
  return h.digest('hex');
}

export function inputsDigest(files: string[]): string {
  const h = createHash('sha256');
  for (const f of files) {
    const st = fs.statSync(f);
    h.update(`${f}\0${fs.realpathSync(f)}\0${st.size}\0${st.mtimeMs}\0${st.ino}\n`);
  }
  return h.digest('hex');
}

/**
 * Builds the three test images as OCI image-layout tarballs and returns their paths. Cached under
 * .tmp/images by a key over the host binaries and this builder's code: a second call is a stat.
 */
export async function buildTestImages(outDir: string = IMAGE_CACHE): Promise<Record<TestImage, string>> {
  fs.mkdirSync(outDir, { recursive: true });
  const architecture = ociArchitecture();
  const builder = builderDigest();
  const recipes: Record<TestImage, () => Promise<Recipe>> = {
    pause: () => pauseRecipe(outDir),
    busybox: busyboxRecipe,
    etcd: etcdRecipe,
  };
  const out = {} as Record<TestImage, string>;
  await Promise.all(
    (Object.keys(TEST_IMAGES) as TestImage[]).map(async (which) => {
      const recipe = await recipes[which]();
      const key = createHash('sha256')
        .update(builder)
        .update(architecture)
        .update(inputsDigest(recipe.inputs))
        .update(recipe.extraKey)
        .digest('hex')
        .slice(0, 16);
      const tarball = path.join(outDir, `${which}-${key}.oci.tar`);
      if (!fs.existsSync(tarball)) {
        writeOciImage({ name: TEST_IMAGES[which], files: recipe.files, config: recipe.config, architecture }, tarball);
        removeOlder(outDir, which, tarball);
      }
      out[which] = tarball;
    }),
  );
  return out;
}

function removeOlder(outDir: string, which: string, keep: string): void {
  for (const f of fs.readdirSync(outDir)) {
    const p = path.join(outDir, f);
    if (f.startsWith(`${which}-`) && f.endsWith('.oci.tar') && p !== keep) fs.rmSync(p, { force: true });
  }
}

/** Builds (if needed) and imports the test images into a private containerd's k8s.io namespace. */
export async function importTestImages(c: PrivateContainerd, images?: Record<TestImage, string>): Promise<void> {
  const tarballs = images ?? (await buildTestImages());
  for (const which of Object.keys(TEST_IMAGES) as TestImage[]) {
    await c.ctr(
      ['images', 'import', '--snapshotter', c.snapshotter, '--platform', `linux/${ociArchitecture()}`, tarballs[which]],
      {
        timeoutMs: 300_000,
      },
    );
  }
  const listed = await c.ctr(['images', 'ls', '-q']);
  const missing = Object.values(TEST_IMAGES).filter((n) => !listed.split('\n').includes(n));
  if (missing.length > 0)
    throw new Error(`images missing after import: ${missing.join(', ')}; ctr images ls:\n${listed}`);
}
