// Temporary directories under the repository's .tmp/ (git-ignored), removed in afterAll.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export const TMP_BASE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '.tmp');

/** Makes a fresh directory under .tmp/ now. The caller removes it (see removeTmpDir). */
export function makeTmpDir(prefix = 'test'): string {
  const base = path.join(TMP_BASE, 'tests');
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, `${prefix.replace(/[^a-zA-Z0-9_.-]/g, '-')}-`));
}

/**
 * Removes a temp dir. Anything still mounted below it (a hostPath bind a runtime left) is
 * unmounted first, so rm never walks into a host directory through a bind mount.
 */
export function removeTmpDir(dir: string): void {
  const base = dir.replace(/\/+$/, '');
  const mounts = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => !!m && (m === base || m.startsWith(base + '/')))
    .sort((a, b) => b.length - a.length);
  if (mounts.length > 0) {
    throw new Error(`not removing ${dir}: still mounted below it: ${mounts.join(', ')}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * A temp dir for the current test file, made now and removed in afterAll (after the file's own
 * afterAll hooks registered earlier, e.g. stopping containerd, since vitest runs afterAll hooks
 * in reverse order of registration; register this one first).
 */
export function useTmpDir(prefix = 'test'): string {
  const dir = makeTmpDir(prefix);
  afterAll(() => removeTmpDir(dir));
  return dir;
}
