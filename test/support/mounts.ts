// Reading the host's mount table in tests, and undoing mounts a failed test left behind.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

export const IS_ROOT = process.getuid?.() === 0;

export interface MountEntry {
  readonly mountPoint: string;
  /** The path of the mounted directory within its filesystem (`/etc` for a bind of /etc on /). */
  readonly root: string;
}

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
function unescape(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export function mountsUnder(dir: string): MountEntry[] {
  const base = fs.realpathSync(dir).replace(/\/+$/, '');
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.split(' '))
    .map((f) => ({ root: unescape(f[3]!), mountPoint: unescape(f[4]!) }))
    .filter((m) => m.mountPoint === base || m.mountPoint.startsWith(base + '/'));
}

/** Unmounts everything below `dir`, deepest first; for afterAll, so a red test leaves no mount. */
export function unmountAllUnder(dir: string): void {
  if (!fs.existsSync(dir)) return;
  for (;;) {
    const left = mountsUnder(dir).sort((a, b) => b.mountPoint.length - a.mountPoint.length);
    if (left.length === 0) return;
    execFileSync('umount', ['-l', left[0]!.mountPoint]);
  }
}
