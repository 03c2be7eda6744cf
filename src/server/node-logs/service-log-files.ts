// A queried service the journal does not know is looked for as a file in the node's log directory
// (heuristicsCopyFileLogs): /var/log/<service>, /var/log/<service>.log, /var/log/<service>/<service>.log,
// the first that is a file, resolved inside the directory. What is not found is said in the answer.
import type { Writable } from 'node:stream';
import { copyInto } from './copy-stream.js';
import { GoPathError, isNotExist, openInside, scopedJoin } from './log-dir.js';

async function copyOne(root: string, service: string, out: Writable, signal: AbortSignal): Promise<void> {
  let failure: unknown;
  for (const name of [service, `${service}.log`, `${service}/${service}.log`]) {
    failure = undefined;
    let path: string;
    try {
      path = await scopedJoin(root, name);
    } catch (e) {
      failure = e;
      break;
    }
    try {
      const opened = await openInside(root, path);
      try {
        // A directory /var/log/<service>/ is where the third name is looked for, not a log.
        if (opened.stats.isDirectory()) {
          failure = new GoPathError('stat', path, 'ENOENT');
          continue;
        }
        const end = await copyInto(opened.handle.createReadStream({ autoClose: false }), out, signal);
        if (end === 'aborted') failure = new Error('context deadline exceeded');
        else if (end === 'failed') failure = new GoPathError('read', path, 'EIO');
      } finally {
        await opened.handle.close();
      }
      break;
    } catch (e) {
      failure = e;
      if (isNotExist(e)) continue;
      break;
    }
  }
  if (failure === undefined) return;
  if (isNotExist(failure)) out.write(`\nlog not found for ${service}\n`);
  else
    out.write(`\nerror getting log for ${service}: ${failure instanceof Error ? failure.message : String(failure)}\n`);
}

/** copyFileLogs: each service's file, in order, within the query's deadline. */
export async function copyServiceLogFiles(
  root: string,
  services: readonly string[],
  out: Writable,
  signal: AbortSignal,
): Promise<void> {
  if (signal.aborted) {
    out.write('\ncontext error: context deadline exceeded\n');
    return;
  }
  for (const s of services) await copyOne(root, s, out, signal);
}
