// The unit and drop-in bootlet ships: what kubeadm's kubelet drop-in reads, bootlet's reads too,
// and the command line systemd builds from kubeadm's files for every kubeadm version is one
// bootlet accepts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/argv.js';
import { expandExecStart, parseServiceUnit } from '../../support/systemd-unit.js';
import { KUBEADM_VERSIONS } from '../../support/kubeadm-versions.js';

const ROOT = path.join(__dirname, '../../..');
const UNIT = fs.readFileSync(path.join(ROOT, 'packaging/systemd/bootlet.service'), 'utf8');
const DROPIN = fs.readFileSync(path.join(ROOT, 'packaging/systemd/bootlet.service.d/20-kubeadm-env.conf'), 'utf8');
const VERSIONS = KUBEADM_VERSIONS;
const fixture = (v: string, f: string): string => path.join(ROOT, 'test/fixtures/kubeadm', v, 'kubelet', f);

/** `Key=value` lines of a section. */
function keys(text: string, section: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current = '';
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t.startsWith('[')) current = t;
    else if (current === `[${section}]` && t && !t.startsWith('#')) {
      const i = t.indexOf('=');
      out.set(t.slice(0, i), [...(out.get(t.slice(0, i)) ?? []), t.slice(i + 1)]);
    }
  }
  return out;
}

describe('bootlet.service', () => {
  it('is a notify service that restarts always and leaves the pods running when it stops', () => {
    const s = keys(UNIT, 'Service');
    expect(s.get('Type')).toEqual(['notify']);
    expect(s.get('NotifyAccess')).toEqual(['all']);
    expect(s.get('Restart')).toEqual(['always']);
    expect(s.get('KillMode')).toEqual(['process']);
    expect(keys(UNIT, 'Install').get('Alias')).toEqual(['kubelet.service']);
    // No option that gives the service its own mount namespace: mounts must reach the runtime.
    for (const k of ['ProtectSystem', 'ProtectHome', 'PrivateTmp', 'PrivateDevices', 'PrivateMounts', 'ProtectControlGroups', 'ReadOnlyPaths', 'MountFlags']) expect(s.has(k), k).toBe(false);
  });
});

describe('the kubeadm drop-in', () => {
  for (const v of VERSIONS) {
    it(`reads what kubeadm ${v}'s kubelet drop-in reads and runs bootlet with the same flags`, () => {
      const kubeadm = parseServiceUnit(fs.readFileSync(fixture(v, '10-kubeadm.conf'), 'utf8'));
      const ours = parseServiceUnit(DROPIN);
      expect(ours.environment).toEqual(expect.arrayContaining(kubeadm.environment));
      expect(ours.environmentFiles).toEqual(expect.arrayContaining(kubeadm.environmentFiles));
      const files: Record<string, string> = {
        '/var/lib/kubelet/kubeadm-flags.env': fs.readFileSync(fixture(v, 'kubeadm-flags.env'), 'utf8'),
        '/etc/default/kubelet': 'KUBELET_EXTRA_ARGS="--node-labels=role=cp --v=2"\n',
        '/etc/default/bootlet': fs.readFileSync(path.join(ROOT, 'packaging/default/bootlet'), 'utf8'),
      };
      const read = (p: string): string | undefined => files[p];
      const theirs = expandExecStart(kubeadm, read);
      const argv = expandExecStart(ours, read);
      expect(argv[0]).toBe('/usr/bin/bootlet');
      expect(argv.slice(1)).toEqual(theirs.slice(1));
      expect(argv).toContain('--v=2');
      expect(parseCommandLine(argv.slice(1)).kind).toBe('run');
    });
  }
});
