// recursiveReadOnly as the kubelet resolves it (resolveRecursiveReadOnly, its messages as the node
// e2e test "Mount recursive read-only" checks them), and what prepareVolumes sends the runtime.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { VolumeMount } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { RecursiveReadOnlyError, resolveRecursiveReadOnly } from '../../../src/node/recursive-read-only.js';
import { prepareVolumes } from '../../../src/node/volumes.js';
import { useTmpDir } from '../../support/tmp.js';
import { container, pod } from '../kuberuntime/fixtures.js';

const mnt = (over: Partial<VolumeMount>): VolumeMount => ({ name: 'mnt', mountPath: '/mnt', ...over });

describe('resolveRecursiveReadOnly', () => {
  const cases: [string, VolumeMount, boolean, boolean | string][] = [
    ['unset', mnt({ readOnly: true }), true, false],
    ['Disabled', mnt({ readOnly: true, recursiveReadOnly: 'Disabled' }), true, false],
    ['Disabled on a writable mount', mnt({ recursiveReadOnly: 'Disabled' }), false, false],
    ['IfPossible, supported', mnt({ readOnly: true, recursiveReadOnly: 'IfPossible' }), true, true],
    ['IfPossible, not supported', mnt({ readOnly: true, recursiveReadOnly: 'IfPossible' }), false, false],
    ['Enabled, supported', mnt({ readOnly: true, recursiveReadOnly: 'Enabled' }), true, true],
    [
      'Enabled with propagation None, supported',
      mnt({ readOnly: true, recursiveReadOnly: 'Enabled', mountPropagation: 'None' }),
      true,
      true,
    ],
    [
      'Enabled, not supported',
      mnt({ readOnly: true, recursiveReadOnly: 'Enabled' }),
      false,
      'failed to resolve recursive read-only mode: volume "mnt" requested recursive read-only mode, but it is not supported by the runtime',
    ],
    [
      'Enabled on a writable mount',
      mnt({ recursiveReadOnly: 'Enabled' }),
      true,
      'failed to resolve recursive read-only mode: volume "mnt" requested recursive read-only mode, but it is not read-only',
    ],
    [
      'IfPossible with HostToContainer propagation',
      mnt({ readOnly: true, recursiveReadOnly: 'IfPossible', mountPropagation: 'HostToContainer' }),
      true,
      'failed to resolve recursive read-only mode: volume "mnt" requested recursive read-only mode, but it is not compatible with propagation "HostToContainer"',
    ],
    [
      'an unknown mode',
      mnt({ readOnly: true, recursiveReadOnly: 'Always' }),
      true,
      'failed to resolve recursive read-only mode: unknown recursive read-only mode "Always"',
    ],
  ];
  it.each(cases)('%s', (_name, m, supported, want) => {
    if (typeof want === 'string') {
      expect(() => resolveRecursiveReadOnly(m, supported)).toThrow(RecursiveReadOnlyError);
      expect(() => resolveRecursiveReadOnly(m, supported)).toThrow(want);
    } else expect(resolveRecursiveReadOnly(m, supported)).toBe(want);
  });
});

describe('prepareVolumes and recursiveReadOnly', () => {
  const tmp = useTmpDir('rro-volumes');
  const rootDir = path.join(tmp, 'root');
  const host = path.join(tmp, 'host');
  fs.mkdirSync(host, { recursive: true });
  const rroPod = (mode: 'Enabled' | 'IfPossible') => {
    const c = container({
      volumeMounts: [
        { name: 'h', mountPath: '/rro', readOnly: true, recursiveReadOnly: mode },
        { name: 'h', mountPath: '/ro', readOnly: true },
      ],
    });
    return { c, p: pod({ spec: { containers: [c], volumes: [{ name: 'h', hostPath: { path: host } }] } }) };
  };

  it('sends recursive_read_only on the mounts that ask for it, where the handler supports it', async () => {
    const { c, p } = rroPod('Enabled');
    const mounts = await prepareVolumes(p, c, { rootDir, supportsRecursiveReadOnly: true });
    expect(mounts.map((m) => [m.containerPath, m.readonly, m.recursiveReadOnly])).toEqual([
      ['/rro', true, true],
      ['/ro', true, false],
      ['/dev/termination-log', false, false],
    ]);
  });

  it('refuses Enabled where the handler does not support it, and takes IfPossible as not recursive', async () => {
    const enabled = rroPod('Enabled');
    await expect(prepareVolumes(enabled.p, enabled.c, { rootDir })).rejects.toThrow(
      'volume "h" requested recursive read-only mode, but it is not supported by the runtime',
    );
    const ifPossible = rroPod('IfPossible');
    const mounts = await prepareVolumes(ifPossible.p, ifPossible.c, { rootDir });
    expect(mounts[0]).toMatchObject({ containerPath: '/rro', readonly: true, recursiveReadOnly: false });
  });
});
