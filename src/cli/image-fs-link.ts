// The runtime's image filesystem for the node's imagefs.available signal: the mountpoint of the
// first filesystem CRI ImageFsInfo names, asked once the agent is connected and again, at most once a
// minute, while it is not known. A mountpoint that is not a clean absolute path is not used.
import * as path from 'node:path';
import type { ImageService } from '../cri/cri-types.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/error-message.js';

const RETRY_MS = 60_000;

export interface ImageFsLink {
  /** The mountpoint, once known. */
  dir(): string | undefined;
}

export function linkImageFs(
  images: Pick<ImageService, 'imageFsInfo'>,
  logger: Logger,
  now: () => number = Date.now,
): ImageFsLink {
  let dir: string | undefined;
  let askedAt = -Infinity;
  let asking = false;
  const ask = (): void => {
    if (asking || now() - askedAt < RETRY_MS) return;
    asking = true;
    askedAt = now();
    images.imageFsInfo().then(
      (info) => {
        asking = false;
        const mount = info.imageFilesystems[0]?.fsId?.mountpoint ?? '';
        if (path.isAbsolute(mount) && path.normalize(mount) === mount) {
          dir = mount;
          logger.v(2).info('Image filesystem of the container runtime', { mountpoint: mount });
        } else logger.v(2).info('The container runtime names no usable image filesystem', { mountpoint: mount });
      },
      (err: unknown) => {
        asking = false;
        logger.v(2).info('ImageFsInfo failed; the imagefs signal waits for it', { err: errorMessage(err) });
      },
    );
  };
  ask();
  return {
    dir() {
      if (dir === undefined) ask();
      return dir;
    },
  };
}
