// Mount options, block devices and hook sleeps as the API server checks them, in its words.
import { describe, expect, it } from 'vitest';
import { pod } from '../helpers';
import { c, problems } from './problems';

const mounted = (mount: Record<string, unknown>, container: Record<string, unknown> = {}) =>
  pod({
    volumes: [{ name: 'v', hostPath: { path: '/var/lib/x' } }],
    containers: [c({ volumeMounts: [{ name: 'v', mountPath: '/v', ...mount }], ...container })],
  });
const M = 'spec.containers[0].volumeMounts';

describe('volume mounts', () => {
  it('Bidirectional propagation only for a privileged container, and known propagation modes', () => {
    expect(problems(mounted({ mountPropagation: 'Bidirectional' }))).toEqual([
      `${M}.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers`,
    ]);
    expect(problems(mounted({ mountPropagation: 'Bidirectional' }, { securityContext: { privileged: true } }))).toEqual(
      [],
    );
    expect(problems(mounted({ mountPropagation: 'Shared' }))).toEqual([
      `${M}.mountPropagation: Unsupported value: "Shared": supported values: "Bidirectional", "HostToContainer", "None"`,
    ]);
  });
  it('recursiveReadOnly needs readOnly and no propagation', () => {
    expect(problems(mounted({ recursiveReadOnly: 'Enabled', mountPropagation: 'HostToContainer' }))).toEqual([
      `${M}.recursiveReadOnly: Forbidden: may only be specified when readOnly is true`,
      `${M}.recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None or not specified`,
    ]);
    expect(problems(mounted({ recursiveReadOnly: 'Always', readOnly: true }))).toEqual([
      `${M}.recursiveReadOnly: Unsupported value: "Always": supported values: "Disabled", "Enabled", "IfPossible"`,
    ]);
    expect(problems(mounted({ recursiveReadOnly: 'IfPossible', readOnly: true }))).toEqual([]);
  });
  it('a mount with no name is both required and not found, as the API server says', () => {
    expect(problems(mounted({ name: '' }))).toEqual([`${M}[0].name: Required value`, `${M}[0].name: Not found: ""`]);
  });
});

describe('volume devices', () => {
  it('only a claim gives a block device', () => {
    expect(problems(mounted({}, { volumeDevices: [{ name: 'v', devicePath: '/dev/xvda' }] }))).toEqual([
      'spec.containers[0].volumeMounts[0].name: Invalid value: "v": must not already exist in volumeDevices',
      'spec.containers[0].volumeDevices[0].name: Invalid value: "v": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode',
      'spec.containers[0].volumeDevices[0].name: Invalid value: "v": must not already exist in volumeMounts',
    ]);
    expect(problems(pod({ containers: [c({ volumeDevices: [{ name: 'disk', devicePath: '/dev/../x' }] })] }))).toEqual([
      'spec.containers[0].volumeDevices[0].name: Not found: "disk"',
      'spec.containers[0].volumeDevices[0].devicePath: Invalid value: "/dev/../x": can not contain backsteps (\'..\')',
    ]);
  });
});

describe('a preStop sleep', () => {
  it('is within the grace period, zero allowed', () => {
    const sleeping = (seconds: number, grace?: number) =>
      pod({
        ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
        containers: [c({ lifecycle: { preStop: { sleep: { seconds } } } })],
      });
    expect(problems(sleeping(31))).toEqual([
      'spec.containers[0].lifecycle.preStop.sleep: Invalid value: 31: must be non-negative and less than terminationGracePeriodSeconds (30)',
    ]);
    expect(problems(sleeping(-1, 10))).toEqual([
      'spec.containers[0].lifecycle.preStop.sleep: Invalid value: -1: must be non-negative and less than terminationGracePeriodSeconds (10)',
    ]);
    expect(problems(sleeping(0))).toEqual([]);
    expect(problems(sleeping(30))).toEqual([]);
  });
});
