// The imagefs signal's filesystem: ImageFsInfo's first mountpoint, asked again while unknown at
// most once a minute, never a path that is not a clean absolute one.
import { describe, expect, it } from 'vitest';
import { linkImageFs } from '../../../src/cli/image-fs-link.js';
import { CriError, type ImageFsInfoResponse } from '../../../src/cri/cri-types.js';
import { nullLogger } from '../../../src/log/logger.js';
import { criOutput } from '../../support/cri-messages.js';

function answer(mountpoint: string): ImageFsInfoResponse {
  return criOutput('ImageFsInfoResponse', {
    imageFilesystems: [{ timestamp: 1, fsId: { mountpoint }, usedBytes: { value: 10 }, inodesUsed: { value: 1 } }],
    containerFilesystems: [],
  });
}

const settle = () => new Promise((r) => setImmediate(r));

describe('linkImageFs', () => {
  it('knows the mountpoint once the runtime answered', async () => {
    const link = linkImageFs({ imageFsInfo: async () => answer('/var/lib/containerd/snapshots') }, nullLogger);
    await settle();
    expect(link.dir()).toBe('/var/lib/containerd/snapshots');
  });

  it('asks again while unknown, at most once a minute', async () => {
    let t = 0;
    const replies: (() => Promise<ImageFsInfoResponse>)[] = [
      () => Promise.reject(new CriError('ImageFsInfo', 14, 'starting')),
      async () => answer('relative/dir'),
      async () => answer('/var/lib/containerd/../etc'),
      async () => answer('/data/containerd'),
    ];
    let asked = 0;
    const link = linkImageFs({ imageFsInfo: () => replies[asked++]!() }, nullLogger, () => t);
    for (const step of [1, 2, 3]) {
      await settle();
      expect(link.dir()).toBeUndefined();
      t += 30_000;
      expect(link.dir()).toBeUndefined();
      expect(asked).toBe(step);
      t += 30_000;
    }
    await settle();
    expect(link.dir()).toBeUndefined();
    await settle();
    expect(link.dir()).toBe('/data/containerd');
    expect(asked).toBe(4);
  });
});
