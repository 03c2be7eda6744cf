import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALL_SETTINGS, CONFIG_STRUCTS, SETTING_BY_FIELD } from '../../../src/cli/settings/table.js';

/** KubeletConfiguration v1beta1 of Kubernetes v1.36: field path → Go type, read from types.go. */
const FIELDS = new Map(
  readFileSync(new URL('../../fixtures/kubelet-config/v1beta1-fields-1.36.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map((l) => l.split('\t') as [string, string]),
);
const structs = [...FIELDS].filter(([, t]) => t.endsWith('(struct)')).map(([p]) => p);
const leaves = [...FIELDS].filter(([, t]) => !t.endsWith('(struct)'));

describe('the settings table', () => {
  it('has every field of KubeletConfiguration v1beta1 (v1.36), applied or marked', () => {
    const missing = leaves.map(([p]) => p).filter((p) => !SETTING_BY_FIELD.has(p));
    expect(missing).toEqual([]);
    expect(leaves.length).toBeGreaterThan(130);
  });

  it('has no field that v1beta1 does not have', () => {
    expect([...SETTING_BY_FIELD.keys()].filter((f) => !FIELDS.has(f))).toEqual([]);
    expect([...CONFIG_STRUCTS].sort()).toEqual([...structs].sort());
  });

  it("treats a zero value as 'use the default' exactly for the non-pointer Go fields", () => {
    const wrong = leaves
      .filter(([p, goType]) => Boolean(SETTING_BY_FIELD.get(p)!.pointer) !== goType.startsWith('*'))
      .map(([p]) => p);
    expect(wrong).toEqual([]);
  });

  it('defines each flag and field once, each with help text and a status', () => {
    const flags = ALL_SETTINGS.flatMap((s) => (s.flag ? [s.flag] : []));
    expect(flags.length).toBe(new Set(flags).size);
    const fields = ALL_SETTINGS.flatMap((s) => (s.field ? [s.field] : []));
    expect(fields.length).toBe(new Set(fields).size);
    for (const s of ALL_SETTINGS) {
      expect(s.flag ?? s.field, 'a setting without a flag or field').toBeTruthy();
      expect(s.help.length, `${s.flag ?? s.field} has no help`).toBeGreaterThan(5);
      expect(['applied', 'not-implemented', 'no-effect']).toContain(s.status);
    }
  });

  it('has defaults that pass its own checks and read back from their --help form', () => {
    for (const s of ALL_SETTINGS) {
      if (s.default === undefined) continue;
      expect(s.validate?.(s.default), `${s.flag ?? s.field} default`).toBeUndefined();
      const scalar = ['string', 'path', 'bool', 'integer', 'duration', 'IP', 'quantity'].includes(s.type.kind);
      if (s.flag && scalar && !s.type.isZero(s.default))
        expect(s.type.fromFlag(s.type.format(s.default), undefined), `${s.flag}`).toEqual(s.default);
    }
  });

  it('applies what kubeadm and the issue ask for, and names the rest', () => {
    const applied = ALL_SETTINGS.filter((s) => s.status === 'applied').map((s) => s.field ?? `--${s.flag}`);
    expect(applied).toEqual(
      expect.arrayContaining([
        'staticPodPath',
        'syncFrequency',
        'fileCheckFrequency',
        'runtimeRequestTimeout',
        'nodeStatusUpdateFrequency',
        'nodeStatusReportFrequency',
        'containerRuntimeEndpoint',
        'imageServiceEndpoint',
        'resolvConf',
        'clusterDNS',
        'clusterDomain',
        'readOnlyPort',
        'podLogsDir',
        'maxPods',
        'failSwapOn',
        'logging.format',
        'logging.verbosity',
        '--kubeconfig',
        '--config',
      ]),
    );
  });
});
