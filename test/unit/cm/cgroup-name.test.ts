import { describe, expect, it } from 'vitest';
import {
  cgroupName,
  CgroupNameError,
  literalName,
  parseCgroupRoot,
  ROOT_CGROUP,
  systemdUnitName,
  toCgroupfs,
  toSystemd,
} from '../../../src/cm/cgroup-name.js';

const UID = '1234-abcd-5678-efgh';
const kubepods = cgroupName(ROOT_CGROUP, 'kubepods');

describe('cgroup names', () => {
  it('cgroupfs: the components joined as a path', () => {
    expect(toCgroupfs(cgroupName(kubepods, `pod${UID}`))).toBe(`/kubepods/pod${UID}`);
    expect(toCgroupfs(cgroupName(kubepods, 'burstable', `pod${UID}`))).toBe(`/kubepods/burstable/pod${UID}`);
    expect(toCgroupfs(cgroupName(kubepods, 'besteffort', `pod${UID}`))).toBe(`/kubepods/besteffort/pod${UID}`);
    expect(toCgroupfs(ROOT_CGROUP)).toBe('/');
  });

  it("systemd: nested slices, with the UID's dashes escaped as underscores (the kubelet's own example)", () => {
    expect(toSystemd(cgroupName(kubepods, 'burstable', `pod${UID}`))).toBe(
      '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd_5678_efgh.slice',
    );
    expect(toSystemd(cgroupName(kubepods, `pod${UID}`))).toBe('/kubepods.slice/kubepods-pod1234_abcd_5678_efgh.slice');
    expect(toSystemd(cgroupName(kubepods, 'besteffort'))).toBe('/kubepods.slice/kubepods-besteffort.slice');
    expect(toSystemd(kubepods)).toBe('/kubepods.slice');
    expect(toSystemd(ROOT_CGROUP)).toBe('/');
  });

  it('systemd unit names are the last slice', () => {
    expect(systemdUnitName(cgroupName(kubepods, 'burstable', `pod${UID}`))).toBe(
      'kubepods-burstable-pod1234_abcd_5678_efgh.slice',
    );
    expect(systemdUnitName(kubepods)).toBe('kubepods.slice');
    expect(systemdUnitName(ROOT_CGROUP)).toBe('-.slice');
  });

  it('literalName follows the driver', () => {
    const n = cgroupName(kubepods, 'burstable', 'podx-y');
    expect(literalName('cgroupfs', n)).toBe('/kubepods/burstable/podx-y');
    expect(literalName('systemd', n)).toBe('/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podx_y.slice');
  });

  it('cgroupRoot: "/" is the root, a deeper root is prefixed', () => {
    expect(parseCgroupRoot('/')).toEqual([]);
    const root = parseCgroupRoot('/node/agent');
    expect(toCgroupfs(cgroupName(root, 'kubepods', 'burstable'))).toBe('/node/agent/kubepods/burstable');
    expect(toSystemd(cgroupName(root, 'kubepods'))).toBe('/node.slice/node-agent.slice/node-agent-kubepods.slice');
    expect(() => parseCgroupRoot('kubepods')).toThrow(/absolute/);
  });

  it('refuses components that would escape the path or break the systemd mapping', () => {
    for (const bad of ['', 'a/b', '..', 'pod_1', 'pod 1', '-x'])
      expect(() => cgroupName(kubepods, bad)).toThrow(CgroupNameError);
  });
});
