// Which processes are still about: a private containerd's daemon and shims name its socket on their
// command lines, so a test can check that stopping it left none behind.
import * as fs from 'node:fs';

/** The PIDs of the processes whose command line names `socket` (the daemon, its shims). */
export function processesNaming(socket: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(socket);
      } catch {
        return false;
      }
    });
}
