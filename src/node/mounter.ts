// Bind mounts and their removal through util-linux mount(8)/umount(8), as the kubelet's
// mount-utils does: bootlet ships as one executable without native code, so no mount(2) binding.
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { errnoOf, mountIdOf, O_DIRECTORY, O_NOFOLLOW, O_PATH } from './proc-fd.js';

const TIMEOUT_MS = 30_000;

export class MountCommandError extends Error {
  override name = 'MountCommandError';
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: TIMEOUT_MS, encoding: 'utf8' }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const why = stderr.trim() || err.message;
      reject(new MountCommandError(`${cmd} ${args.join(' ')}: ${why}`));
    });
  });
}

/**
 * Binds `source` at `target`. --no-canonicalize: mount(8) must hand the kernel the path as given,
 * a /proc/<pid>/fd/<n> magic link, not the name it resolves to, which could have been swapped.
 */
export function bindMount(source: string, target: string): Promise<void> {
  return run('mount', ['--no-canonicalize', '--bind', source, target]);
}

/** A tmpfs at `target`, with `size=<bytes>` when given (emptyDir sizeLimit), as the kubelet mounts medium: Memory. */
export function mountTmpfs(target: string, sizeBytes?: number): Promise<void> {
  const opts = sizeBytes !== undefined ? ['-o', `size=${sizeBytes}`] : [];
  return run('mount', ['--no-canonicalize', '-t', 'tmpfs', ...opts, 'tmpfs', target]);
}

export function unmount(target: string): Promise<void> {
  return run('umount', ['--no-canonicalize', target]);
}

/**
 * Whether something is mounted at `p` itself: its mount differs from its parent directory's.
 * Compares mount ids, so a bind of a directory of the same filesystem counts. A missing `p` is not.
 */
export async function isMountPoint(p: string): Promise<boolean> {
  let fh;
  try {
    fh = await open(p, O_PATH | O_NOFOLLOW);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw err;
  }
  // Closed before returning: an open handle on a mount point keeps umount from removing it.
  try {
    const parent = await open(path.dirname(p), O_PATH | O_DIRECTORY);
    try {
      return (await mountIdOf(fh)) !== (await mountIdOf(parent));
    } finally {
      await parent.close();
    }
  } finally {
    await fh.close();
  }
}
