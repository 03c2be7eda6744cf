import { describe, expect, it } from 'vitest';
import {
  containerdDriverHint,
  driverFromRuntimeError,
  runtimeConfigDriver,
} from '../../../src/cm/runtime-cgroup-driver.js';
import { CgroupDriver, CriError, type RuntimeConfigResponse } from '../../../src/cri/cri-types.js';

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
  it("RuntimeConfig's answer, as the kubelet's getCgroupDriverFromCRI reads it", async () => {
    const answer = (res: RuntimeConfigResponse) => runtimeConfigDriver({ runtimeConfig: async () => res });
    await expect(answer({ linux: { cgroupDriver: CgroupDriver.SYSTEMD } })).resolves.toEqual({
      kind: 'driver',
      driver: 'systemd',
    });
    await expect(answer({ linux: { cgroupDriver: CgroupDriver.CGROUPFS } })).resolves.toEqual({
      kind: 'driver',
      driver: 'cgroupfs',
    });
    await expect(answer({ linux: null })).resolves.toEqual({ kind: 'silent' });
    await expect(answer({ linux: { cgroupDriver: 7 as CgroupDriver } })).resolves.toEqual({
      kind: 'unknown-driver',
      value: 7,
    });
  });

  it('UNIMPLEMENTED is asked once; another error is tried three times, 2 s apart, then reported', async () => {
    const slept: number[] = [];
    const sleep = async (ms: number) => void slept.push(ms);
    let calls = 0;
    const failing = (code: number, message: string) => ({
      runtimeConfig: () => {
        calls++;
        return Promise.reject(new CriError('RuntimeConfig', code, message));
      },
    });
    await expect(
      runtimeConfigDriver(failing(12, 'unknown method RuntimeConfig for service runtime.v1.RuntimeService'), { sleep }),
    ).resolves.toEqual({ kind: 'unimplemented' });
    expect([calls, slept]).toEqual([1, []]);
    calls = 0;
    const failed = await runtimeConfigDriver(failing(14, 'connection refused'), { sleep });
    expect(failed.kind).toBe('failed');
    expect(failed.kind === 'failed' && failed.err).toMatch(/connection refused/);
    expect([calls, slept]).toEqual([3, [2000, 2000, 2000]]);
    // A runtime still starting up: the second try answers.
    let tries = 0;
    const late = {
      runtimeConfig: () =>
        ++tries === 1
          ? Promise.reject(new CriError('RuntimeConfig', 14, 'starting'))
          : Promise.resolve({ linux: { cgroupDriver: CgroupDriver.CGROUPFS } }),
    };
    await expect(runtimeConfigDriver(late, { sleep })).resolves.toEqual({ kind: 'driver', driver: 'cgroupfs' });
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
