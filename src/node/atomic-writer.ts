// The kubelet's atomic writer (pkg/volume/util/atomic_writer.go), our own code: a volume's files
// live in a hidden timestamped directory `..<UTC time>.<random>`, the `..data` link names the
// current one, and each user-visible top-level name is a link into `..data/`. A new version is
// written beside the old one and goes live in one rename of a temporary `..data_tmp` link over
// `..data`, so a reader sees the old set of files or the new one, never a mix. An identical payload
// changes nothing: no new directory, no rename (a container watching `..data` sees no event).
import { lstat, mkdir, mkdtemp, open, readdir, readlink, rename, rm, symlink, unlink, chmod } from 'node:fs/promises';
import path from 'node:path';
import { errnoOf, O_NOFOLLOW, O_RDONLY } from './proc-fd.js';
import { VolumeError } from './volume-errors.js';

export const DATA_DIR_NAME = '..data';
const NEW_DATA_DIR_NAME = '..data_tmp';
const MAX_FILE_NAME_LENGTH = 255;
const MAX_PATH_LENGTH = 4096;

export interface FileProjection {
  readonly data: Buffer;
  /** Permission bits, e.g. 0o644. */
  readonly mode: number;
}

/** Relative path (as given in items[].path) → content. */
export type Payload = ReadonlyMap<string, FileProjection>;

export interface AtomicWriteOptions {
  /** Called on the new timestamped directory before it goes live (fsGroup ownership). */
  readonly setPerms?: (tsDir: string) => Promise<void>;
  /** The clock the directory name is made from; default now. */
  readonly now?: () => Date;
}

/** The kubelet's validatePath rules: relative, no `..` element, not starting with `..`, bounded lengths. */
export function validatePayloadPath(p: string): string {
  if (p === '') throw new VolumeError(`invalid path: must not be empty: ${JSON.stringify(p)}`);
  if (p.includes('\0')) throw new VolumeError(`invalid path: must not contain NUL: ${JSON.stringify(p)}`);
  if (path.isAbsolute(p)) throw new VolumeError(`invalid path: must be relative path: ${p}`);
  if (p.length > MAX_PATH_LENGTH)
    throw new VolumeError(`invalid path: must be less than or equal to ${MAX_PATH_LENGTH} characters`);
  const items = p.split('/');
  for (const item of items) {
    if (item === '..') throw new VolumeError(`invalid path: must not contain '..': ${p}`);
    if (item.length > MAX_FILE_NAME_LENGTH)
      throw new VolumeError(`invalid path: filenames must be less than or equal to ${MAX_FILE_NAME_LENGTH} characters`);
  }
  if (items[0]!.startsWith('..')) throw new VolumeError(`invalid path: must not start with '..': ${p}`);
  const clean = path.posix.normalize(p).replace(/\/+$/, '');
  if (clean === '.' || clean === '') throw new VolumeError(`invalid path: must name a file: ${JSON.stringify(p)}`);
  return clean;
}

function cleanPayload(payload: Payload): Map<string, FileProjection> {
  const out = new Map<string, FileProjection>();
  for (const [p, f] of payload) {
    if (!Number.isInteger(f.mode) || f.mode < 0 || f.mode > 0o777)
      throw new VolumeError(`invalid mode ${String(f.mode)} for ${JSON.stringify(p)}: must be in 0000..0777`);
    out.set(validatePayloadPath(p), f);
  }
  // A file and a directory of one name cannot both exist: "a" and "a/b".
  for (const p of out.keys()) {
    for (let d = path.posix.dirname(p); d !== '.'; d = path.posix.dirname(d)) {
      if (out.has(d))
        throw new VolumeError(
          `invalid payload: ${JSON.stringify(d)} is both a file and the directory of ${JSON.stringify(p)}`,
        );
    }
  }
  return out;
}

/** The timestamped directory `..data` names, or undefined: only a plain `..`-name of this directory counts. */
async function currentTsDir(targetDir: string): Promise<string | undefined> {
  let target: string;
  try {
    target = await readlink(path.join(targetDir, DATA_DIR_NAME));
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    // Not a link (EINVAL): something else sits at ..data; it is replaced by the rename.
    if (errnoOf(err) === 'EINVAL') return undefined;
    throw err;
  }
  if (
    !target.startsWith('..') ||
    target.includes('/') ||
    target === '..' ||
    target === DATA_DIR_NAME ||
    target === NEW_DATA_DIR_NAME
  )
    return undefined;
  return target;
}

/** Reads `rel` under `dir` following no symlink at any component; undefined if it is not a plain file there. */
async function readNoFollow(dir: string, rel: string): Promise<Buffer | undefined> {
  const parts = rel.split('/');
  let cur = dir;
  for (const part of parts.slice(0, -1)) {
    cur = path.join(cur, part);
    const st = await lstat(cur).catch(() => undefined);
    if (!st?.isDirectory()) return undefined;
  }
  let fh;
  try {
    fh = await open(path.join(cur, parts[parts.length - 1]!), O_RDONLY | O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    if (!(await fh.stat()).isFile()) return undefined;
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/** Every path (files and directories) under `dir`, relative to it, not following links. */
async function walk(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await readdir(path.join(dir, rel), { withFileTypes: true });
  } catch (err) {
    if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return out;
    throw err;
  }
  for (const e of entries) {
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    out.push(p);
    if (e.isDirectory()) out.push(...(await walk(dir, p)));
  }
  return out;
}

async function shouldWrite(payload: Map<string, FileProjection>, oldTsPath: string): Promise<boolean> {
  for (const [p, f] of payload) {
    const old = await readNoFollow(oldTsPath, p);
    if (old === undefined || !old.equals(f.data)) return true;
    // A mode change is a change too (the kubelet compares content only, and so misses a new defaultMode).
    const st = await lstat(path.join(oldTsPath, p));
    if ((st.mode & 0o777) !== f.mode) return true;
  }
  return false;
}

/** Paths of the old version that the new one no longer has (their parents kept when still used). */
function pathsToRemove(oldPaths: readonly string[], payload: Map<string, FileProjection>): Set<string> {
  const keep = new Set<string>();
  for (const p of payload.keys()) for (let d = p; d !== '.'; d = path.posix.dirname(d)) keep.add(d);
  return new Set(oldPaths.filter((p) => !keep.has(p)));
}

function timestampPrefix(d: Date): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return `..${d.getUTCFullYear()}_${two(d.getUTCMonth() + 1)}_${two(d.getUTCDate())}_${two(d.getUTCHours())}_${two(d.getUTCMinutes())}_${two(d.getUTCSeconds())}.`;
}

/** Whether it made the directory (false: it was there). */
async function makeDir(p: string): Promise<boolean> {
  try {
    await mkdir(p, { mode: 0o755 });
    return true;
  } catch (err) {
    if (errnoOf(err) === 'EEXIST') return false;
    throw err;
  }
}

async function writePayloadToDir(payload: Map<string, FileProjection>, dir: string): Promise<void> {
  for (const [p, f] of payload) {
    const full = path.join(dir, p);
    // The directories are ours, made fresh in a directory nobody else writes: no link can be in the
    // way. Each is chmodded: group and other must walk them whatever the umask.
    const parent = path.posix.dirname(p);
    let sub = dir;
    for (const part of parent === '.' ? [] : parent.split('/')) {
      sub = path.join(sub, part);
      if (await makeDir(sub)) await chmod(sub, 0o755);
    }
    const fh = await open(full, 'wx', f.mode);
    try {
      await fh.writeFile(f.data);
      // The umask cut the mode at open; the payload's mode is what the container must see.
      await fh.chmod(f.mode);
    } finally {
      await fh.close();
    }
  }
}

/** Makes `name` a link to ..data/name; a wrong link is replaced atomically, anything else is an error. */
async function ensureUserVisibleLink(targetDir: string, name: string): Promise<void> {
  const link = path.join(targetDir, name);
  const want = `${DATA_DIR_NAME}/${name}`;
  const st = await lstat(link).catch((err: unknown) => {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw err;
  });
  if (st && !st.isSymbolicLink()) throw new VolumeError(`${link} exists and is not a link into ${DATA_DIR_NAME}`);
  if (st && (await readlink(link)) === want) return;
  if (!st) return symlink(want, link);
  const tmp = path.join(targetDir, `${DATA_DIR_NAME}_link_tmp`);
  await unlink(tmp).catch(() => undefined);
  await symlink(want, tmp);
  await rename(tmp, link);
}

/**
 * Writes `payload` into `targetDir` (which must exist) atomically. Returns whether anything
 * changed: false when the content, modes and set of files are those already there.
 */
export async function writeAtomically(
  targetDir: string,
  payload: Payload,
  opts: AtomicWriteOptions = {},
): Promise<boolean> {
  const clean = cleanPayload(payload);
  const oldTsDir = await currentTsDir(targetDir);
  const oldTsPath = oldTsDir === undefined ? undefined : path.join(targetDir, oldTsDir);
  const oldPaths = oldTsPath === undefined ? [] : await walk(oldTsPath);
  const removed = pathsToRemove(oldPaths, clean);
  if (oldTsPath !== undefined && removed.size === 0 && !(await shouldWrite(clean, oldTsPath))) {
    // The links can have been lost (a crash between the rename and the links): make them again.
    for (const top of topLevelNames(clean)) await ensureUserVisibleLink(targetDir, top);
    return false;
  }

  const tsDir = await mkdtemp(path.join(targetDir, timestampPrefix((opts.now ?? (() => new Date()))())));
  try {
    // Group and other must be able to walk into it, whatever the umask.
    await chmod(tsDir, 0o755);
    await writePayloadToDir(clean, tsDir);
    await opts.setPerms?.(tsDir);
    const tmpLink = path.join(targetDir, NEW_DATA_DIR_NAME);
    await unlink(tmpLink).catch(() => undefined);
    await symlink(path.basename(tsDir), tmpLink);
    // The one step that makes the new version live.
    await rename(tmpLink, path.join(targetDir, DATA_DIR_NAME));
  } catch (err) {
    await rm(tsDir, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
  for (const top of topLevelNames(clean)) await ensureUserVisibleLink(targetDir, top);
  for (const p of removed) {
    if (p.includes('/')) continue;
    const st = await lstat(path.join(targetDir, p)).catch(() => undefined);
    if (st?.isSymbolicLink()) await unlink(path.join(targetDir, p));
  }
  await removeStaleTsDirs(targetDir, path.basename(tsDir));
  return true;
}

function topLevelNames(payload: Map<string, FileProjection>): Set<string> {
  return new Set([...payload.keys()].map((p) => p.split('/')[0]!));
}

/** The old version, and any a crash left half-written: every `..<timestamp>` directory but the live one. */
async function removeStaleTsDirs(targetDir: string, live: string): Promise<void> {
  for (const e of await readdir(targetDir, { withFileTypes: true })) {
    if (e.isDirectory() && /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\./.test(e.name) && e.name !== live) {
      await rm(path.join(targetDir, e.name), { recursive: true, force: true });
    }
  }
}
