// Finding and removing mounts a containerd left behind (rootfs overlays, sandbox /dev/shm, ...).
import { readFileSync } from 'node:fs';
import { tryRun } from './exec.js';

/** Decodes the octal escapes (\040 for a space, ...) /proc/self/mountinfo uses in paths. */
function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

export function mountPoints(): string[] {
  const text = readFileSync('/proc/self/mountinfo', 'utf8');
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    if (fields.length > 4) out.push(unescapeMountPath(fields[4]!));
  }
  return out;
}

export function mountsUnder(dir: string): string[] {
  const base = dir.replace(/\/+$/, '');
  return mountPoints()
    .filter((m) => m === base || m.startsWith(base + '/'))
    .sort((a, b) => b.length - a.length);
}

/** Lazily unmounts everything at or below each dir, deepest first, until nothing is left. */
export async function unmountAllUnder(...dirs: string[]): Promise<string[]> {
  const failed = new Set<string>();
  for (let round = 0; round < 5; round++) {
    const left = dirs.flatMap((d) => mountsUnder(d)).filter((m) => !failed.has(m));
    if (left.length === 0) break;
    for (const m of left) {
      if ((await tryRun('umount', ['-l', m], { timeoutMs: 20_000 })) === undefined) {
        // It may have gone with its parent; only remember it if still there.
        if (mountPoints().includes(m)) failed.add(m);
      }
    }
  }
  return [...failed];
}
