// The kubelet's AppArmor admit handler: a pod asking for a confining profile on a host without
// AppArmor is refused (reason AppArmor, "Cannot enforce AppArmor: ..."), through the field or the
// deprecated annotation; Unconfined needs nothing; and the host is read as runc reads it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { APPARMOR_NOT_ENABLED, readAppArmorHost } from '../../../src/node/apparmor-host.js';
import { useTmpDir } from '../../support/tmp.js';
import { node, pod } from './pods.js';

const noAppArmor = node({ appArmor: { error: APPARMOR_NOT_ENABLED } });
const withAppArmor = node({ appArmor: {} });
const refusal = {
  admit: false,
  reason: 'AppArmor',
  message: 'Cannot enforce AppArmor: AppArmor is not enabled on the host',
};

const annotated = (value: string): Pod => {
  const p = pod('annotated');
  p.metadata!.annotations!['container.apparmor.security.beta.kubernetes.io/c'] = value;
  return p;
};
const containerProfile = (profile: { type: string; localhostProfile?: string }): Pod =>
  pod('field', { containers: [{ name: 'c', image: 'i', securityContext: { appArmorProfile: profile } }] });

describe('AppArmor admit handler', () => {
  it.each<[string, Pod]>([
    ['a Localhost profile on the container', containerProfile({ type: 'Localhost', localhostProfile: 'deny-write' })],
    ['RuntimeDefault on the container', containerProfile({ type: 'RuntimeDefault' })],
    ['a profile on the pod', pod('p', { spec: { securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } } })],
    ['the deprecated annotation', annotated('localhost/deny-write')],
    [
      'a profile on an init container',
      pod('i', {
        spec: {
          initContainers: [
            { name: 'init', image: 'i', securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } },
          ],
        },
      }),
    ],
  ])('refuses %s on a host without AppArmor', (_name, p) => {
    expect(canAdmitPod(p, [], noAppArmor)).toEqual(refusal);
    expect(canAdmitPod(p, [], withAppArmor).admit).toBe(true);
  });

  it('admits Unconfined, and a pod that asks for nothing, anywhere', () => {
    expect(canAdmitPod(containerProfile({ type: 'Unconfined' }), [], noAppArmor).admit).toBe(true);
    expect(canAdmitPod(annotated('unconfined'), [], noAppArmor).admit).toBe(true);
    expect(canAdmitPod(pod('plain'), [], noAppArmor).admit).toBe(true);
  });

  it('refuses a Localhost profile without a name on a host with AppArmor', () => {
    const d = canAdmitPod(containerProfile({ type: 'Localhost', localhostProfile: '  ' }), [], withAppArmor);
    expect(d).toMatchObject({ admit: false, reason: 'AppArmor' });
    expect(d.admit === false && d.message).toContain('Cannot enforce AppArmor: invalid empty AppArmor profile name');
  });

  it('does not refuse a pod found running (the kubelet checks a Pending pod only)', () => {
    expect(
      canAdmitPod(containerProfile({ type: 'RuntimeDefault' }), [], noAppArmor, { skipIgnorableChecks: true }).admit,
    ).toBe(true);
  });
});

describe('the host', () => {
  const tmp = useTmpDir('apparmor-host');
  const sys = (enabled: string | undefined, securityfs: boolean): string => {
    const root = fs.mkdtempSync(path.join(tmp, 'sys-'));
    if (securityfs) fs.mkdirSync(path.join(root, 'kernel/security/apparmor'), { recursive: true });
    if (enabled !== undefined) {
      fs.mkdirSync(path.join(root, 'module/apparmor/parameters'), { recursive: true });
      fs.writeFileSync(path.join(root, 'module/apparmor/parameters/enabled'), enabled);
    }
    return root;
  };

  it('enabled only with securityfs apparmor and the module saying Y', async () => {
    expect(await readAppArmorHost(sys('Y\n', true))).toEqual({});
    expect(await readAppArmorHost(sys('N\n', true))).toEqual({ error: APPARMOR_NOT_ENABLED });
    expect(await readAppArmorHost(sys('Y\n', false))).toEqual({ error: APPARMOR_NOT_ENABLED });
    expect(await readAppArmorHost(sys(undefined, false))).toEqual({ error: APPARMOR_NOT_ENABLED });
  });

  it('this machine, as its kernel says', async () => {
    let enabled = false;
    try {
      enabled =
        fs.existsSync('/sys/kernel/security/apparmor') &&
        fs.readFileSync('/sys/module/apparmor/parameters/enabled', 'utf8').startsWith('Y');
    } catch {
      // no AppArmor module
    }
    expect(await readAppArmorHost()).toEqual(enabled ? {} : { error: APPARMOR_NOT_ENABLED });
  });
});
