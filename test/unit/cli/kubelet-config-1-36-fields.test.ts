// The KubeletConfiguration v1beta1 fields 1.35 and 1.36 added (1.35 none; 1.36 tlsCurvePreferences and
// memoryReservationPolicy): read, typed and checked, recognised but not acted on, so a file that sets one
// starts with it named in the one start-up warning, and one that spells out the default starts silently.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/argv.js';
import type { BootletOptions } from '../../../src/cli/options.js';
import { resolveOptions } from '../../../src/cli/resolve-options.js';

const dir = mkdtempSync(join(tmpdir(), 'bootlet-136-fields-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function resolveFile(body: string): BootletOptions {
  const f = join(dir, `c${n++}.yaml`);
  writeFileSync(f, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n' + body);
  const cmd = parseCommandLine([`--config=${f}`]);
  if (cmd.kind !== 'run') throw new Error(cmd.kind);
  return resolveOptions(cmd.flags, cmd.deprecations);
}

describe('KubeletConfiguration fields of 1.36', () => {
  it('takes the defaults spelled out without a warning', () => {
    const o = resolveFile('memoryReservationPolicy: None\ntlsCurvePreferences: []\n');
    expect(o.notes.notImplemented).toEqual([]);
  });

  it('takes other values and names them as not acted on', () => {
    const o = resolveFile('memoryReservationPolicy: TieredReservation\ntlsCurvePreferences: [4588, 29, 23]\n');
    expect(o.notes.notImplemented).toEqual(['tlsCurvePreferences', 'memoryReservationPolicy']);
  });

  it('refuses a value of the wrong type or outside the policies', () => {
    expect(() => resolveFile('tlsCurvePreferences: ["X25519"]\n')).toThrow(/tlsCurvePreferences/);
    expect(() => resolveFile('tlsCurvePreferences: [4294967296]\n')).toThrow(/out of range/);
    expect(() => resolveFile('memoryReservationPolicy: Tiered\n')).toThrow(
      /memoryReservationPolicy.*must be one of "", "None", "TieredReservation"/,
    );
  });
});

describe('feature gates at their 1.36 defaults', () => {
  it('take a gate set to its 1.36 default silently (a file that spells out NodeDeclaredFeatures or ImageVolume)', () => {
    const o = resolveFile(
      'featureGates: {NodeDeclaredFeatures: true, ImageVolume: true, ContainerStopSignals: false}\n',
    );
    expect(o.featureGates).toEqual({});
    expect(o.notes.notImplemented).toEqual([]);
  });

  it('name a gate set away from its default as not acted on', () => {
    const o = resolveFile('featureGates: {NodeDeclaredFeatures: false, UserNamespacesHostNetworkSupport: true}\n');
    expect(o.featureGates).toEqual({ NodeDeclaredFeatures: false, UserNamespacesHostNetworkSupport: true });
    expect(o.notes.notImplemented).toEqual(['featureGates']);
  });
});
