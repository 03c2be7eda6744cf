// A recursive remove that stays on one mount and never follows a symlink. A pod directory can
// hold what containers wrote (symlinks to anywhere) and, if an unmount failed, a bind of a host
// directory: `rm -r` through a bind of /etc deletes /etc. Every directory is opened with
// O_NOFOLLOW relative to its parent's fd, and one that sits on another mount than the top is
// refused, with nothing below it touched.
import { readdir, rmdir, unlink, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { at, errnoOf, mountIdOf, O_DIRECTORY, O_NOFOLLOW, O_PATH, O_RDONLY, openAt, self } from './proc-fd.js';
import { PodCleanupError } from './volume-errors.js';
import { errorMessage } from '../util/error-message.js';

/** Files unlinked at once in one directory. */
const PARALLEL_UNLINKS = 32;

interface Top {
  readonly path: string;
  readonly mountId: number;
  readonly dev: number;
}

function crossing(top: Top, where: string): PodCleanupError {
  return new PodCleanupError(
    `refusing to remove ${top.path}: ${where} is a mount point (or another filesystem); unmount it first`,
    where,
  );
}

function failed(where: string, what: string, err: unknown): PodCleanupError {
  return new PodCleanupError(`cannot ${what} ${where}: ${errnoOf(err) ?? errorMessage(err)}`, where, { cause: err });
}

/** `retyped`: the entry already turned out to be of the other kind once; no third attempt. */
async function removeEntry(
  dir: FileHandle,
  shown: string,
  name: string,
  isDir: boolean,
  top: Top,
  retyped = false,
): Promise<void> {
  const where = path.join(shown, name);
  if (isDir) {
    let child: FileHandle;
    try {
      child = await openAt(dir, name, O_RDONLY | O_DIRECTORY);
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'ENOENT') return;
      // Not a directory any more (a symlink now, say): unlink removes the link, not its target.
      if ((code !== 'ENOTDIR' && code !== 'ELOOP') || retyped) throw failed(where, 'open', err);
      return removeEntry(dir, shown, name, false, top, true);
    }
    try {
      if ((await mountIdOf(child)) !== top.mountId || (await child.stat()).dev !== top.dev) throw crossing(top, where);
      await emptyDirectory(child, where, top);
    } finally {
      await child.close();
    }
    try {
      await rmdir(at(dir, name));
    } catch (err) {
      if (errnoOf(err) === 'EBUSY') throw crossing(top, where);
      if (errnoOf(err) !== 'ENOENT') throw failed(where, 'remove', err);
    }
    return;
  }
  try {
    await unlink(at(dir, name));
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT') return;
    // A file with something bind-mounted on it.
    if (code === 'EBUSY') throw crossing(top, where);
    if (code === 'EISDIR' && !retyped) return removeEntry(dir, shown, name, true, top, true);
    throw failed(where, 'remove', err);
  }
}

async function emptyDirectory(dir: FileHandle, shown: string, top: Top): Promise<void> {
  let entries;
  try {
    entries = await readdir(self(dir), { withFileTypes: true });
  } catch (err) {
    throw failed(shown, 'read', err);
  }
  const files = entries.filter((e) => !e.isDirectory());
  for (let i = 0; i < files.length; i += PARALLEL_UNLINKS) {
    await Promise.all(files.slice(i, i + PARALLEL_UNLINKS).map((e) => removeEntry(dir, shown, e.name, false, top)));
  }
  for (const e of entries.filter((x) => x.isDirectory())) await removeEntry(dir, shown, e.name, true, top);
}

/**
 * Removes `dir` and everything below it, unless something below is mounted: then it throws a
 * PodCleanupError naming the mount point. A missing `dir` is success; a symlink at `dir` is refused.
 */
export async function removeTreeOnOneMount(dir: string): Promise<void> {
  let root: FileHandle;
  try {
    root = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return;
    throw failed(dir, 'open', err);
  }
  try {
    const parent = await open(path.dirname(dir), O_PATH | O_DIRECTORY);
    let parentMount: number;
    try {
      parentMount = await mountIdOf(parent);
    } finally {
      await parent.close();
    }
    const top: Top = { path: dir, mountId: await mountIdOf(root), dev: (await root.stat()).dev };
    if (top.mountId !== parentMount) throw crossing(top, dir);
    await emptyDirectory(root, dir, top);
  } finally {
    await root.close();
  }
  try {
    await rmdir(dir);
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw failed(dir, 'remove', err);
  }
}
