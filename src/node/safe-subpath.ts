// Opening a volumeMount's subPath without ever leaving the volume, as the kubelet's safe subpath
// does (pkg/volume/util/subpath: doSafeOpen, doSafeMakeDir). Symlinks inside the volume are
// resolved first and the result must still lie in the volume; then every component is opened
// from the volume root with O_NOFOLLOW, so a component swapped for a symlink in the meantime
// is refused rather than followed. Missing directories are created one at a time, each relative
// to its parent's fd, with the volume's permissions.
import type { Stats } from 'node:fs';
import { lstat, mkdir, open, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { at, errnoOf, O_DIRECTORY, O_NOFOLLOW, O_PATH, O_RDONLY, openAt } from './proc-fd.js';
import { SubPathError, VolumeError } from './volume-errors.js';
import { errorMessage } from '../util/error-message.js';

export interface OpenedSubPath {
  /** An O_PATH handle on the subPath itself (directory, file, socket, ...); the caller closes it. */
  readonly handle: FileHandle;
  readonly stat: Stats;
  /** Where it is, relative to the volume root, symlinks inside the volume resolved. */
  readonly resolved: string;
}

const q = JSON.stringify;

/** The subPath's components; the caller has refused absolute paths and '..' already. */
function componentsOf(subPath: string): string[] {
  const parts = subPath.split('/').filter((c) => c !== '' && c !== '.');
  if (parts.includes('..')) throw new SubPathError(`subPath ${q(subPath)} must not contain '..'`);
  return parts;
}

/** `real` as components under `base`, or a refusal when it is elsewhere. */
function insideBase(base: string, real: string, subPath: string): string[] {
  const rel = path.relative(base, real);
  if (rel === '') return [];
  if (rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)) {
    throw new SubPathError(`subPath ${q(subPath)} resolves outside the volume`);
  }
  return rel.split('/');
}

async function whyNotADirectory(dir: FileHandle, name: string, shown: string, subPath: string): Promise<SubPathError> {
  try {
    if ((await lstat(at(dir, name))).isSymbolicLink())
      return new SubPathError(`subPath ${q(subPath)}: ${q(shown)} is a symlink`);
  } catch {
    // gone meanwhile: the generic message below
  }
  return new SubPathError(`subPath ${q(subPath)}: ${q(shown)} is not a directory`);
}

/** Opens directory `name` in `dir`, refusing a symlink or anything that is not a directory. */
async function openDir(
  dir: FileHandle,
  name: string,
  flags: number,
  shown: string,
  subPath: string,
): Promise<FileHandle> {
  try {
    return await openAt(dir, name, flags | O_DIRECTORY);
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOTDIR' || code === 'ELOOP') throw await whyNotADirectory(dir, name, shown, subPath);
    throw new SubPathError(`subPath ${q(subPath)}: cannot open ${q(shown)}: ${code ?? errorMessage(err)}`);
  }
}

/**
 * Walks `components` from the volume root `base` (already free of symlinks), refusing a symlink
 * at any of them, then creates `toCreate` below the last one with mode `perm`. Returns the final
 * handle. This, not the resolution before it, is what keeps a swapped-in symlink from being used.
 */
export async function walkInVolume(
  base: string,
  components: string[],
  toCreate: string[],
  perm: number,
  subPath: string,
): Promise<FileHandle> {
  let current: FileHandle;
  try {
    current = await open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    throw new VolumeError(`cannot open volume directory ${base}: ${errnoOf(err) ?? errorMessage(err)}`);
  }
  const shown: string[] = [];
  try {
    for (const [i, name] of components.entries()) {
      shown.push(name);
      const last = i === components.length - 1 && toCreate.length === 0;
      let next: FileHandle;
      if (!last) {
        next = await openDir(current, name, O_PATH, shown.join('/'), subPath);
      } else {
        // The end may be a file (or a socket, or a device): O_PATH opens it without reading it,
        // and with O_NOFOLLOW a symlink is opened as itself, to be refused here.
        try {
          next = await openAt(current, name, O_PATH);
        } catch (err) {
          throw new SubPathError(
            `subPath ${q(subPath)}: cannot open ${q(shown.join('/'))}: ${errnoOf(err) ?? errorMessage(err)}`,
          );
        }
        if ((await next.stat()).isSymbolicLink()) {
          await next.close();
          throw new SubPathError(`subPath ${q(subPath)}: ${q(shown.join('/'))} is a symlink`);
        }
      }
      await current.close();
      current = next;
    }
    for (const name of toCreate) {
      shown.push(name);
      try {
        await mkdir(at(current, name), perm);
      } catch (err) {
        // EEXIST: made meanwhile, or a (dangling) symlink, which openDir refuses below.
        if (errnoOf(err) !== 'EEXIST')
          throw new SubPathError(
            `subPath ${q(subPath)}: cannot create ${q(shown.join('/'))}: ${errnoOf(err) ?? errorMessage(err)}`,
          );
      }
      const next = await openDir(current, name, O_RDONLY, shown.join('/'), subPath);
      await current.close();
      current = next;
      // mkdir's mode was cut by the umask; the kubelet sets the volume's mode on what it made.
      await current.chmod(perm);
    }
    return current;
  } catch (err) {
    await current.close();
    throw err;
  }
}

/**
 * Opens `subPath` of the volume at `volumePath`, creating it as a directory (and its missing
 * parents) with the volume's permissions when it does not exist, as the kubelet does. Refuses,
 * with a SubPathError, a subPath that leads out of the volume at any component.
 */
export async function openSubPath(volumePath: string, subPath: string): Promise<OpenedSubPath> {
  const wanted = componentsOf(subPath);
  let base: string;
  let perm: number;
  try {
    base = await realpath(volumePath);
    perm = (await stat(base)).mode & 0o7777;
  } catch (err) {
    throw new VolumeError(`volume directory ${volumePath}: ${errnoOf(err) ?? errorMessage(err)}`);
  }
  let existing: string[] = [];
  let toCreate: string[] = [];
  try {
    existing = insideBase(base, await realpath(path.join(base, ...wanted)), subPath);
  } catch (err) {
    if (err instanceof SubPathError) throw err;
    const code = errnoOf(err);
    if (code !== 'ENOENT') throw new SubPathError(`subPath ${q(subPath)}: ${code ?? errorMessage(err)}`);
    // The longest prefix that exists (symlinks resolved) must be inside; the rest is created.
    let found = false;
    for (let i = wanted.length - 1; i >= 0 && !found; i--) {
      try {
        existing = insideBase(base, await realpath(path.join(base, ...wanted.slice(0, i))), subPath);
        toCreate = wanted.slice(i);
        found = true;
      } catch (e) {
        if (e instanceof SubPathError) throw e;
        if (errnoOf(e) !== 'ENOENT') throw new SubPathError(`subPath ${q(subPath)}: ${errnoOf(e) ?? errorMessage(e)}`);
      }
    }
  }
  const handle = await walkInVolume(base, existing, toCreate, perm, subPath);
  try {
    return { handle, stat: await handle.stat(), resolved: [...existing, ...toCreate].join('/') };
  } catch (err) {
    await handle.close();
    throw new SubPathError(`subPath ${q(subPath)}: ${errnoOf(err) ?? errorMessage(err)}`);
  }
}
