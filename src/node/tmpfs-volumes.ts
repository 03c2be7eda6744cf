// Memory-backed volume directories: a tmpfs on the volume dir itself, as the kubelet's emptyDir
// medium: Memory (which secrets and projected tokens are set up on, so they never touch disk).
// The agent keeps no list of them: before a pod dir is removed, /proc/self/mountinfo says which
// tmpfs mounts are under it, so an agent restarted since the mount still finds them.
import { open, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isMountPoint, mountTmpfs, unmount } from './mounter.js';
import { errnoOf, forChildProcess, O_DIRECTORY, O_NOFOLLOW, O_PATH } from './proc-fd.js';
import { errorMessage } from '../util/error-message.js';
import { PodCleanupError, VolumeError } from './volume-errors.js';

const MOUNTINFO = '/proc/self/mountinfo';
const MAX_STACKED_MOUNTS = 8;

/** Mounts a tmpfs on `dir` (an existing directory of ours) unless something is mounted there already. */
export async function ensureTmpfs(dir: string, sizeBytes?: number): Promise<void> {
  if (await isMountPoint(dir)) {
    // Ours from an earlier container start (or agent run). Anything else there would take a
    // credential onto a filesystem it was never meant for.
    const real = await realpath(dir);
    if ((await tmpfsMountsUnder(path.dirname(real))).includes(real)) return;
    throw new VolumeError(
      `${dir} is a mount point, but not a tmpfs: refusing to write memory-backed volume content there`,
    );
  }
  // Mounted through the descriptor: a link swapped in at `dir` meanwhile is never followed.
  const fh = await open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  try {
    await mountTmpfs(forChildProcess(fh), sizeBytes);
  } finally {
    await fh.close();
  }
}

/** mountinfo's octal escapes (\040 for a space, \011, \012, \134). */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export interface MountInfoEntry {
  readonly mountPoint: string;
  readonly fsType: string;
}

export function parseMountInfo(text: string): MountInfoEntry[] {
  const out: MountInfoEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const sep = fields.indexOf('-');
    if (fields.length < 5 || sep === -1 || sep + 1 >= fields.length) continue;
    out.push({ mountPoint: unescapeMountPath(fields[4]!), fsType: fields[sep + 1]! });
  }
  return out;
}

/** The tmpfs mount points strictly under `dir`, deepest first. */
export async function tmpfsMountsUnder(dir: string): Promise<string[]> {
  // mountinfo names resolved paths; a directory that is gone has nothing mounted under it.
  let real: string;
  try {
    real = await realpath(dir);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return [];
    throw err;
  }
  const prefix = real.endsWith('/') ? real : `${real}/`;
  const entries = parseMountInfo(await readFile(MOUNTINFO, 'utf8'));
  const points = new Set(
    entries.filter((e) => e.fsType === 'tmpfs' && e.mountPoint.startsWith(prefix)).map((e) => e.mountPoint),
  );
  return [...points].sort((a, b) => b.length - a.length);
}

/** Unmounts every tmpfs under `dir` (each as often as it is stacked). Throws PodCleanupError, retryable. */
export async function unmountTmpfsUnder(dir: string): Promise<void> {
  let points: string[];
  try {
    points = await tmpfsMountsUnder(dir);
  } catch (err) {
    throw new PodCleanupError(`cannot read ${MOUNTINFO}: ${errorMessage(err)}`, dir, { cause: err });
  }
  for (const p of points) {
    for (let i = 0; await isMountPoint(p); i++) {
      if (i >= MAX_STACKED_MOUNTS)
        throw new PodCleanupError(`${p} is still mounted after ${MAX_STACKED_MOUNTS} unmounts`, p);
      try {
        await unmount(p);
      } catch (err) {
        throw new PodCleanupError(`cannot unmount tmpfs ${p}: ${errorMessage(err)}`, p, { cause: err });
      }
    }
  }
}
