// Lets a rescan skip files nobody touched since they were last read: one stat instead of the two
// stats, two reads and a settle pause per file that readManifestFile takes. A file counts as
// untouched when its inode, size, mtime and ctime are what they were at that read. Only a read
// taken when the file's last change was already STABLE_AFTER_MS old is remembered: file times come
// from a coarse clock, so a write landing just after a read could otherwise leave them unchanged.
import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';

export const STABLE_AFTER_MS = 1000;

const fingerprint = (st: Stats): string => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

export class UnchangedFiles {
  private readonly known = new Map<string, string>();

  /** After a complete read of `file`, with the stat the read was checked against. */
  remember(file: string, st: Stats, nowMs = Date.now()): void {
    if (st.isFile() && nowMs - st.ctimeMs >= STABLE_AFTER_MS) this.known.set(file, fingerprint(st));
    else this.known.delete(file);
  }

  forget(file: string): void {
    this.known.delete(file);
  }

  /** True only if the file was remembered and still looks the same; otherwise it must be read. */
  async unchanged(file: string): Promise<boolean> {
    return (await this.check(file)) === 'unchanged';
  }

  /**
   * As `unchanged`, and `missing` when the stat found no file (as the read's own first stat would):
   * a removed file then costs one failing stat, not two (a flood removes thousands).
   */
  async check(file: string): Promise<'unchanged' | 'missing' | 'read'> {
    const fp = this.known.get(file);
    if (fp === undefined) return 'read';
    let st: Stats | undefined;
    try {
      st = await stat(file);
    } catch (err) {
      this.known.delete(file);
      return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'read';
    }
    if (fingerprint(st) === fp) return 'unchanged';
    this.known.delete(file);
    return 'read';
  }
}
