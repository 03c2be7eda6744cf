// Path operations relative to an open directory, as openat(2) and friends do them; Node has no
// *at calls. `/proc/self/fd/<dirfd>/<name>`: the kernel resolves the magic link to exactly the
// directory the fd holds (whatever its path has become), and O_NOFOLLOW, mkdir, unlink and rmdir
// apply to <name>, the last component, so a symlink there is never followed. Linux only.
import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';

/** O_PATH (x86_64, arm64 and most other Linux ABIs); Node's fs.constants does not export it. */
export const O_PATH = 0o10000000;
export const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** Whether `name` is one path component that stays in its directory. */
export function isPlainComponent(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0');
}

/** `name` inside the directory `dir` holds, for any path-taking call. */
export function at(dir: FileHandle, name: string): string {
  if (!isPlainComponent(name)) throw new Error(`not a single path component: ${JSON.stringify(name)}`);
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** The directory `dir` holds itself. */
export function self(dir: FileHandle): string {
  return `/proc/self/fd/${dir.fd}`;
}

/** The same, for another process (mount(8)) to resolve: /proc/self would be its own. */
export function forChildProcess(fh: FileHandle): string {
  return `/proc/${process.pid}/fd/${fh.fd}`;
}

/** Opens `name` in `dir` without following a symlink there. */
export function openAt(dir: FileHandle, name: string, flags: number): Promise<FileHandle> {
  return open(at(dir, name), flags | O_NOFOLLOW);
}

/**
 * The id of the mount `fh` lives on. Every mount has its own, a bind of a directory of the same
 * filesystem included, where st_dev would be equal.
 */
export async function mountIdOf(fh: FileHandle): Promise<number> {
  const info = await readFile(`/proc/self/fdinfo/${fh.fd}`, 'utf8');
  const m = /^mnt_id:\s*(\d+)$/m.exec(info);
  if (!m) throw new Error(`no mnt_id in /proc/self/fdinfo/${fh.fd}`);
  return Number(m[1]);
}

export function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}
