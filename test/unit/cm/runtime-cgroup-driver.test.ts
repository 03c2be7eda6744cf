import { describe, expect, it } from 'vitest';
import {
  containerdDriverHint,
  driverFromRuntimeError,
  runtimeConfigDriver,
} from '../../../src/cm/runtime-cgroup-driver.js';
import { CgroupDriver, CriError } from '../../../src/cri/cri-types.js';

function containerdInfo(
  options: Record<string, unknown> | null,
  runtimeType = 'io.containerd.runc.v2',
): Record<string, string> {
  // The shape containerd 1.6 returns in Status(verbose).info.config (trimmed).
  return {
    config: JSON.stringify({
      containerd: {
        snapshotter: 'overlayfs',
        defaultRuntimeName: 'runc',
        runtimes: { runc: { runtimeType, options } },
      },
    }),
  };
}

describe('the runtime cgroup driver', () => {
  it('RuntimeConfig answers win; UNIMPLEMENTED means unknown; other errors are errors', async () => {
    await expect(
      runtimeConfigDriver({ runtimeConfig: async () => ({ linux: { cgroupDriver: CgroupDriver.SYSTEMD } }) }),
    ).resolves.toBe('systemd');
    await expect(
      runtimeConfigDriver({ runtimeConfig: async () => ({ linux: { cgroupDriver: CgroupDriver.CGROUPFS } }) }),
    ).resolves.toBe('cgroupfs');
    const unimplemented = new CriError(
      'RuntimeConfig',
      12,
      'unknown method RuntimeConfig for service runtime.v1.RuntimeService',
    );
    await expect(runtimeConfigDriver({ runtimeConfig: () => Promise.reject(unimplemented) })).resolves.toBeUndefined();
    await expect(
      runtimeConfigDriver({ runtimeConfig: () => Promise.reject(new CriError('RuntimeConfig', 14, 'down')) }),
    ).rejects.toThrow(/down/);
  });

  it("reads containerd's runc SystemdCgroup option from a verbose Status", () => {
    expect(containerdDriverHint(containerdInfo({ SystemdCgroup: true }))).toEqual({
      driver: 'systemd',
      runtimeHandler: 'runc',
    });
    expect(containerdDriverHint(containerdInfo(null))).toEqual({ driver: 'cgroupfs', runtimeHandler: 'runc' });
    expect(containerdDriverHint(containerdInfo({ SystemdCgroup: true }, 'io.containerd.kata.v2'))).toBeUndefined();
    expect(containerdDriverHint({})).toBeUndefined();
    expect(containerdDriverHint({ config: '{"cri-o": true}' })).toBeUndefined();
  });

  it('tells which driver a runtime error shows', () => {
    expect(
      driverFromRuntimeError(
        'runc create failed: expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, got "/k8s.io/abc" instead',
      ),
    ).toBe('systemd');
    expect(
      driverFromRuntimeError(
        'cri-o configured with systemd cgroup manager, but did not receive slice as parent: /kubepods/pod1',
      ),
    ).toBe('systemd');
    expect(
      driverFromRuntimeError(
        'cri-o configured with cgroupfs cgroup manager, but received systemd slice as parent: /kubepods.slice',
      ),
    ).toBe('cgroupfs');
    expect(driverFromRuntimeError('no such image')).toBeUndefined();
  });
});
