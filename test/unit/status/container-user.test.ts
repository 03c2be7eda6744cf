// status.containerStatuses[].user (KEP-3619): the identities the container's first process started
// with, as the runtime reports them in ContainerStatus.user; nothing where it reports none.
import { describe, expect, it } from 'vitest';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import { ctr, input, runtimePod, sandbox } from './fixtures.js';

describe('containerStatuses[].user', () => {
  it('is the runtime’s ContainerStatus.user, supplementalGroups left out when empty', () => {
    const s = generatePodStatus(
      input({
        runtime: runtimePod(
          [sandbox()],
          [ctr('c1', 'app', { user: { uid: 1000, gid: 3000, supplementalGroups: [4000, 50000] } })],
        ),
      }),
    );
    expect(s.containerStatuses?.[0]?.user).toEqual({
      linux: { uid: 1000, gid: 3000, supplementalGroups: [4000, 50000] },
    });
    const root = generatePodStatus(
      input({
        runtime: runtimePod([sandbox()], [ctr('c1', 'app', { user: { uid: 0, gid: 0, supplementalGroups: [] } })]),
      }),
    );
    expect(root.containerStatuses?.[0]?.user).toEqual({ linux: { uid: 0, gid: 0 } });
  });

  it('is absent where the runtime reports none (containerd before 2.0)', () => {
    const s = generatePodStatus(input({ runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) }));
    expect(s.containerStatuses?.[0]).not.toHaveProperty('user');
  });
});
