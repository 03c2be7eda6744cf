// The settings of the 1.36 kubelet API features: enableSystemLogHandler / enableSystemLogQuery
// (defaults and ValidateKubeletConfiguration's check) and the two GA feature gates, locked on.
import { describe, expect, it } from 'vitest';
import { resolveArgv, useConfigFiles } from './resolve-argv.js';

const { configFile } = useConfigFiles('bootlet-136-settings-');
const resolve = resolveArgv;

describe('enableSystemLogHandler and enableSystemLogQuery', () => {
  it("default as the kubelet's: the handler on, the query off", () => {
    expect(resolve([])).toMatchObject({ enableSystemLogHandler: true, enableSystemLogQuery: false });
  });

  it('are read from the file, and count as applied (no start-up warning)', () => {
    const o = resolve([`--config=${configFile('enableSystemLogQuery: true\n')}`]);
    expect(o).toMatchObject({ enableSystemLogHandler: true, enableSystemLogQuery: true });
    expect(o.notes.notImplemented).toEqual([]);
    const off = resolve([`--config=${configFile('enableSystemLogHandler: false\n')}`]);
    expect(off.enableSystemLogHandler).toBe(false);
  });

  it('refuses the query without the handler, in the kubelet words', () => {
    const f = configFile('enableSystemLogHandler: false\nenableSystemLogQuery: true\n');
    expect(() => resolve([`--config=${f}`])).toThrow(
      'invalid configuration: enableSystemLogHandler is required for enableSystemLogQuery',
    );
  });
});

describe('KubeletFineGrainedAuthz and NodeLogQuery: GA in 1.36, locked to true', () => {
  it('take true silently (a 1.30–1.35 file that turned them on still starts, with no warning)', () => {
    const f = configFile('featureGates: {NodeLogQuery: true, KubeletFineGrainedAuthz: true}\n');
    const o = resolve([`--config=${f}`, '--feature-gates=NodeLogQuery=true']);
    expect(o.notes.notImplemented).toEqual([]);
    expect(o.featureGates).toEqual({});
  });

  it('refuse false as the kubelet does, from the file and from the flag', () => {
    const f = configFile('featureGates: {KubeletFineGrainedAuthz: false}\n');
    expect(() => resolve([`--config=${f}`])).toThrow(
      `${f}:3: featureGates: cannot set feature gate KubeletFineGrainedAuthz to false, feature is locked to true`,
    );
    expect(() => resolve(['--feature-gates=NodeLogQuery=false'])).toThrow(
      'invalid value "NodeLogQuery=false" for flag --feature-gates: cannot set feature gate NodeLogQuery to false, feature is locked to true',
    );
  });

  it('leave other gates to the not-implemented warning', () => {
    const o = resolve(['--feature-gates=NodeLogQuery=true,InPlacePodVerticalScaling=true']);
    expect(o.featureGates).toEqual({ InPlacePodVerticalScaling: true });
    expect(o.notes.notImplemented).toEqual(['--feature-gates']);
  });
});
