// Debian sid's runc (1.3: idmapped mounts, which containerd 2.x needs before it says a handler
// supports user namespaces) made to run on this Debian 12, whose glibc is older than it needs: a
// copy of the binary gets sid's dynamic loader as its ELF interpreter and sid's libc6 and
// libseccomp2 as its library path (bookworm's patchelf rewrites the copy). Every package comes
// from dev/debian-packages.ts, unpacked and never installed. runc re-executes itself
// (/proc/self/exe), which keeps the same interpreter, so `runc init` runs the same way.
//
// `npx tsx dev/sid-runc.ts` prints the path.
import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import * as path from 'node:path';
import { debianCacheDir, fetchDebianPackages } from './debian-packages.js';
import { run } from './exec.js';

const LIBDIR = 'usr/lib/x86_64-linux-gnu';

let made: Promise<string> | undefined;

/** The patched copy of sid's runc, made once per runc version (cached beside the packages). */
export function sidRunc(): Promise<string> {
  made ??= make();
  made.catch(() => (made = undefined));
  return made;
}

async function make(): Promise<string> {
  const [runc, libc, seccomp] = await fetchDebianPackages('sid', ['runc', 'libc6', 'libseccomp2']);
  const [patchelf] = await fetchDebianPackages('bookworm', ['patchelf']);
  const dir = path.join(debianCacheDir(), 'sid', 'patched', `runc_${runc!.version}_libc6_${libc!.version}`);
  const out = path.join(dir, 'runc');
  if (existsSync(out)) return out;
  mkdirSync(dir, { recursive: true });
  const tmp = `${out}.partial-${process.pid}`;
  copyFileSync(path.join(runc!.root, 'usr/sbin/runc'), tmp);
  await run(path.join(patchelf!.root, 'usr/bin/patchelf'), [
    '--set-interpreter',
    path.join(libc!.root, LIBDIR, 'ld-linux-x86-64.so.2'),
    '--set-rpath',
    [path.join(libc!.root, LIBDIR), path.join(seccomp!.root, LIBDIR)].join(':'),
    tmp,
  ]);
  // It must run here before it is handed out.
  await run(tmp, ['--version']);
  renameSync(tmp, out);
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  console.log(await sidRunc());
}
