// Names from manifests and runtime labels are checked before they become path components.
import { describe, expect, it } from 'vitest';
import { podContainerDir, podDir, podSubPathTarget, podVolumeDir } from '../../../src/node/pod-dirs.js';
import { refused } from './refused.js';

const ROOT = '/var/lib/kubelet';
const UID = '0123456789abcdef0123456789abcdef';
const EMPTY_DIR = 'kubernetes.io~empty-dir';

describe('pod directory paths', () => {
  it('are where the kubelet keeps them', () => {
    expect(podDir(ROOT, UID)).toBe(`${ROOT}/pods/${UID}`);
    expect(podDir(ROOT, '3f2a1b4c-0d5e-4f60-8a7b-9c0d1e2f3a4b')).toBe(
      `${ROOT}/pods/3f2a1b4c-0d5e-4f60-8a7b-9c0d1e2f3a4b`,
    );
    expect(podVolumeDir(ROOT, UID, EMPTY_DIR, 'data')).toBe(`${ROOT}/pods/${UID}/volumes/${EMPTY_DIR}/data`);
    expect(podContainerDir(ROOT, UID, 'app')).toBe(`${ROOT}/pods/${UID}/containers/app`);
    expect(podSubPathTarget(ROOT, UID, 'data', 'app', 2)).toBe(`${ROOT}/pods/${UID}/volume-subpaths/data/app/2`);
  });

  it.each(['', '.', '..', '../../../../ESCAPED/evil', 'a/b', 'a'.repeat(37), 'uid_with_underscore', 'x\0y', '-'])(
    'refuse pod uid %j',
    (uid) => {
      refused(() => podDir(ROOT, uid), 'pod uid');
    },
  );

  it.each(['', '..', 'a/b', 'Data', '-x', 'x-', 'a.b', 'a'.repeat(64)])(
    'refuse volume and container name %j',
    (name) => {
      refused(() => podVolumeDir(ROOT, UID, EMPTY_DIR, name), 'volume name');
      refused(() => podContainerDir(ROOT, UID, name), 'container name');
      refused(() => podSubPathTarget(ROOT, UID, name, 'app', 0), 'volume name');
      refused(() => podSubPathTarget(ROOT, UID, 'data', name, 0), 'container name');
    },
  );

  it('refuse a plugin directory or a mount index that is not one', () => {
    refused(() => podVolumeDir(ROOT, UID, '..', 'data'), 'volume plugin directory');
    refused(() => podSubPathTarget(ROOT, UID, 'data', 'app', -1), 'volumeMount index');
    refused(() => podSubPathTarget(ROOT, UID, 'data', 'app', 1.5), 'volumeMount index');
  });
});
