import { describe, expect, it } from 'vitest';
import { logStartupNotes } from '../../../src/cli/startup-notes.js';
import { createLogger } from '../../../src/log/logger.js';

describe('start-up notes', () => {
  it('say each deprecation as the kubelet does, and name what bootlet ignores in one line', () => {
    const lines: string[] = [];
    const logger = createLogger({ format: 'json', verbosity: 0, sink: { write: (l) => lines.push(l) } });
    logStartupNotes(
      {
        notImplemented: ['cgroupDriver', '--bootstrap-kubeconfig'],
        unknownFields: ['podHousekeepingPeriod'],
        duplicateFields: [],
        deprecations: ['Flag --pod-infra-container-image has been deprecated, will be removed in 1.35.'],
        skipped: [],
      },
      logger,
      '/var/lib/kubelet/config.yaml',
    );
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r.msg)).toEqual([
      'Flag --pod-infra-container-image has been deprecated, will be removed in 1.35.',
      'Settings that bootlet does not implement are ignored',
      'Unknown KubeletConfiguration fields are ignored: not in kubelet.config.k8s.io/v1beta1 of Kubernetes v1.36.0',
    ]);
    expect(records[1]).toMatchObject({ severity: 'warning', settings: 'cgroupDriver,--bootstrap-kubeconfig' });
    expect(records[2]).toMatchObject({ file: '/var/lib/kubelet/config.yaml', fields: 'podHousekeepingPeriod' });
  });

  it('say nothing when there is nothing to say', () => {
    const lines: string[] = [];
    logStartupNotes(
      { notImplemented: [], unknownFields: [], duplicateFields: [], deprecations: [], skipped: [] },
      createLogger({ format: 'json', verbosity: 0, sink: { write: (l) => lines.push(l) } }),
      undefined,
    );
    expect(lines).toEqual([]);
  });
});
