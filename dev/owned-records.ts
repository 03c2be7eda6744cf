// What a dev helper leaves under .tmp/ for a run it started: a directory with a JSON record naming
// the test process that owns it, so that the next run ends what a crashed one left behind.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAlive } from './exec.js';
import { TMP_BASE } from './paths.js';

/** Tears down each `<TMP_BASE>/<prefix>*` whose record's owner process is gone. */
export async function endOrphanedRecords<R extends { readonly ownerPid: number }>(
  prefix: string,
  recordFile: string,
  teardown: (record: R) => Promise<void>,
): Promise<void> {
  if (!fs.existsSync(TMP_BASE)) return;
  for (const e of fs.readdirSync(TMP_BASE)) {
    if (!e.startsWith(prefix)) continue;
    let r: R;
    try {
      r = JSON.parse(fs.readFileSync(path.join(TMP_BASE, e, recordFile), 'utf8')) as R;
    } catch {
      continue;
    }
    if (!isAlive(r.ownerPid)) await teardown(r);
  }
}
