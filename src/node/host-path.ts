// hostPath `type` checks, with the kubelet's messages (pkg/volume/hostpath).
import { mkdir, open, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { VolumeError } from './volume-errors.js';
import { errorMessage } from '../util/error-message.js';

async function statOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await stat(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new VolumeError(`hostPath ${p}: ${errorMessage(err)}`);
  }
}

function fail(p: string, what: string): never {
  throw new VolumeError(`hostPath type check failed: ${p} is not ${what}`);
}

/** Checks (and for the *OrCreate types creates) a hostPath; unset or "" checks nothing. */
export async function checkHostPathType(p: string, type: string | undefined): Promise<void> {
  if (!type) return;
  let st = await statOrUndefined(p);
  switch (type) {
    case 'DirectoryOrCreate':
      if (!st) {
        // Parents too, 0755 before umask, as the kubelet.
        await mkdir(p, { recursive: true, mode: 0o755 });
        return;
      }
      if (!st.isDirectory()) fail(p, 'a directory');
      return;
    case 'Directory':
      if (!st?.isDirectory()) fail(p, 'a directory');
      return;
    case 'FileOrCreate':
      if (!st) {
        // Like the kubelet, the parent must exist: only the file itself is created.
        try {
          await (await open(p, 'a', 0o644)).close();
        } catch (err) {
          throw new VolumeError(
            `hostPath type check failed: cannot create ${p}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`,
          );
        }
        st = await statOrUndefined(p);
      }
      if (!st?.isFile()) fail(p, 'a file');
      return;
    case 'File':
      if (!st?.isFile()) fail(p, 'a file');
      return;
    case 'Socket':
      if (!st?.isSocket()) fail(p, 'a socket file');
      return;
    case 'CharDevice':
      if (!st?.isCharacterDevice()) fail(p, 'a character device');
      return;
    case 'BlockDevice':
      if (!st?.isBlockDevice()) fail(p, 'a block device');
      return;
    default:
      throw new VolumeError(`${type} is an invalid volume type`);
  }
}
