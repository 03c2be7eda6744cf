// The node's log directory (/var/log) as the only place /logs/ reads from. Names are resolved
// inside it the way the kubelet's securejoin does (a symlink is followed as if the directory were
// the root, so `..` and absolute links stay inside); a file is opened only when what was opened is
// inside the directory, checked on the open descriptor itself, so no link or rename race leads out.
import { constants, promises as fsp, type Stats } from 'node:fs';
import { posix } from 'node:path';

/** The kubelet's nodeLogDir. */
export const NODE_LOG_DIR = '/var/log/';

const MAX_SYMLINKS = 255;

/** A failed system call as Go's os.PathError prints it: "stat /var/log/x: no such file or directory". */
export class GoPathError extends Error {
  constructor(
    readonly op: string,
    readonly path: string,
    readonly code: string,
  ) {
    super(`${op} ${path}: ${GO_ERRNO_TEXT[code] ?? code.toLowerCase()}`);
    this.name = 'GoPathError';
  }
}

/** syscall.Errno's Error() for the errors a read of /var/log meets. */
const GO_ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  EISDIR: 'is a directory',
  EIO: 'input/output error',
};

function errnoOf(e: unknown): string {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : 'EIO';
}

export const isNotExist = (e: unknown): boolean => {
  const code = e instanceof GoPathError ? e.code : errnoOf(e);
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/**
 * securejoin.SecureJoin(root, unsafePath): the path under root that unsafePath names when every
 * symlink on the way is read as if root were `/`. Components that do not exist stay as written.
 */
export async function scopedJoin(root: string, unsafePath: string): Promise<string> {
  const base = root.replace(/\/+$/, '') || '/';
  let current = '';
  let remaining = unsafePath;
  let links = 0;
  while (remaining !== '') {
    const slash = remaining.indexOf('/');
    const part = slash < 0 ? remaining : remaining.slice(0, slash);
    remaining = slash < 0 ? '' : remaining.slice(slash + 1);
    const next = posix.join('/', current, part);
    if (next === '/') {
      current = '';
      continue;
    }
    const full = `${base}/${next.slice(1)}`;
    let st: Stats | undefined;
    try {
      st = await fsp.lstat(full);
    } catch (e) {
      if (!isNotExist(e)) throw new GoPathError('lstat', full, errnoOf(e));
    }
    if (!st?.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++links > MAX_SYMLINKS) throw new GoPathError('SecureJoin', `${base}/${unsafePath}`, 'ELOOP');
    const dest = await fsp.readlink(full);
    remaining = `${dest}/${remaining}`;
    if (dest.startsWith('/')) current = '';
  }
  return posix.join(base, posix.join('/', current));
}

/** os.Stat's error for a path, or undefined when it exists. */
export async function goStatProblem(path: string): Promise<string | undefined> {
  try {
    await fsp.stat(path);
    return undefined;
  } catch (e) {
    return new GoPathError('stat', path, errnoOf(e)).message;
  }
}

function inside(root: string, real: string): boolean {
  return real === root || real.startsWith(root === '/' ? '/' : `${root}/`);
}

export interface OpenedLogEntry {
  readonly handle: fsp.FileHandle;
  readonly stats: Stats;
  /** Where it really is (symlinks resolved), inside the log directory. */
  readonly realPath: string;
}

/**
 * Opens `path` (absolute, or relative to the log directory) for reading when it resolves to
 * something inside the log directory. A path that leads out is refused as EACCES, one that is
 * not there as ENOENT (GoPathError either way, with the path as asked). Never blocks on a FIFO.
 */
export async function openInside(root: string, path: string): Promise<OpenedLogEntry> {
  const asked = posix.isAbsolute(path) ? path : posix.join(root, path);
  let realRoot: string;
  let real: string;
  try {
    realRoot = await fsp.realpath(root);
    real = await fsp.realpath(asked);
  } catch (e) {
    throw new GoPathError('open', asked, errnoOf(e));
  }
  if (!inside(realRoot, real)) throw new GoPathError('open', asked, 'EACCES');
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    throw new GoPathError('open', asked, errnoOf(e));
  }
  try {
    // What was opened, whatever happened to the names since realpath.
    const opened = await fsp.readlink(`/proc/self/fd/${handle.fd}`);
    const stats = await handle.stat();
    if (!inside(realRoot, opened)) throw new GoPathError('open', asked, 'EACCES');
    if (!stats.isFile() && !stats.isDirectory()) throw new GoPathError('open', asked, 'EACCES');
    return { handle, stats, realPath: opened };
  } catch (e) {
    await handle.close();
    throw e instanceof GoPathError ? e : new GoPathError('open', asked, errnoOf(e));
  }
}
