// The agent's own output files, so that none of them is ever read as a manifest. A manifest that
// was a symlink to the agent's log made every refusal a write to the manifest, which was read
// again and refused again, about ten times a second, forever. Files are compared by device and
// inode (fstat of stdout and stderr as the agent started), whatever name or link leads to them.
import { fstatSync } from 'node:fs';

export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

export interface OwnOutputFile extends FileIdentity {
  /** What the file is to the agent, for the refusal message. */
  readonly what: string;
}

/** stdout and stderr when they are regular files (a journal socket, a pipe or /dev/null never is a manifest). */
export function ownOutputFiles(
  fds: ReadonlyArray<{ fd: number; what: string }> = [
    { fd: 1, what: 'standard output' },
    { fd: 2, what: 'standard error' },
  ],
): OwnOutputFile[] {
  const out: OwnOutputFile[] = [];
  for (const { fd, what } of fds) {
    try {
      const st = fstatSync(fd);
      if (st.isFile()) out.push({ dev: st.dev, ino: st.ino, what });
    } catch {
      // A closed descriptor is no file of ours.
    }
  }
  return out;
}

/** Why a file with identity `st` must not be read as a manifest, or undefined when it may be. */
export function ownOutputReason(st: FileIdentity, own: readonly OwnOutputFile[]): string | undefined {
  const mine = own.filter((o) => o.dev === st.dev && o.ino === st.ino);
  if (mine.length === 0) return undefined;
  return `the file is the agent's own ${mine.map((o) => o.what).join(' and ')} (its log): bootlet never reads its own output as a manifest; remove it from the manifest path`;
}
