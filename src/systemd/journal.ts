// Whether stderr is connected to the systemd journal: systemd sets JOURNAL_STREAM to the device
// and inode of the stream it gave the service, and it is the journal only if stderr is still that
// very file (a service may redirect its output elsewhere, or pass the variable on to a child).
import { fstatSync } from 'node:fs';

export function stderrIsJournal(env: NodeJS.ProcessEnv = process.env, fd = 2): boolean {
  const m = /^(\d+):(\d+)$/.exec(env.JOURNAL_STREAM ?? '');
  if (!m) return false;
  try {
    const st = fstatSync(fd, { bigint: true });
    return st.dev === BigInt(m[1]!) && st.ino === BigInt(m[2]!);
  } catch {
    return false;
  }
}
