import { describe, expect, it } from 'vitest';
import { CGROUP_V1_REFUSED, CgroupV1Error, checkCgroupV1 } from '../../../src/cli/fail-cgroup-v1.js';
import { resolveOptions } from '../../../src/cli/resolve-options.js';
import { parseCommandLine } from '../../../src/cli/argv.js';

describe('failCgroupV1 (KEP-5573)', () => {
  it("refuses a cgroup v1 host by default, in the kubelet's words", () => {
    expect(() => checkCgroupV1(true, false)).toThrow(CgroupV1Error);
    expect(() => checkCgroupV1(true, false)).toThrow(
      'failed to validate kubelet configuration, error: kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release',
    );
    expect(() => checkCgroupV1(true, false)).toThrow(/set failCgroupV1: false .* or --fail-cgroupv1=false/);
    expect(CGROUP_V1_REFUSED).toContain('kubelet is configured to not run on a host using cgroup v1');
  });

  it('runs on cgroup v2 whatever the setting, and on v1 when told it may (then the warning is due)', () => {
    expect(checkCgroupV1(true, true)).toBe(false);
    expect(checkCgroupV1(false, true)).toBe(false);
    expect(checkCgroupV1(false, false)).toBe(true);
  });

  it('defaults to true, as the kubelet since 1.35; the flag and the field turn it off', () => {
    const opts = (argv: string[]) => {
      const cmd = parseCommandLine(argv);
      if (cmd.kind !== 'run') throw new Error('not a run');
      return resolveOptions(cmd.flags, cmd.deprecations);
    };
    expect(opts([]).failCgroupV1).toBe(true);
    expect(opts(['--fail-cgroupv1=false']).failCgroupV1).toBe(false);
  });
});
