import { describe, expect, it } from 'vitest';
import { parseMountInfo } from '../../../src/node/tmpfs-volumes.js';

describe('parseMountInfo', () => {
  it('reads the mount point (unescaped) and the filesystem type after the separator', () => {
    const text = [
      '36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw,errors=continue',
      '40 36 0:45 / /var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/s rw,relatime shared:5 - tmpfs tmpfs rw,size=1024k',
      'garbage',
      '',
    ].join('\n');
    expect(parseMountInfo(text)).toEqual([
      { mountPoint: '/mnt/with space', fsType: 'ext3' },
      { mountPoint: '/var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/s', fsType: 'tmpfs' },
    ]);
  });
});
