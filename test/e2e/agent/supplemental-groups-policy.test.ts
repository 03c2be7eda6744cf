// supplementalGroupsPolicy (KEP-3619, GA 1.35) with a runtime that honours it (Debian sid's
// containerd 2.1, run privately): the Node reports status.features.supplementalGroupsPolicy, a static
// pod with Strict runs, its process has only the groups the pod names, and its mirror shows
// containerStatuses[].user.linux as the runtime reports it.
import * as path from 'node:path';
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';
import { busyboxPod } from '../../support/busybox-pod.js';

const NODE = 'groups-e2e';
const h = useAgentHarness('groups', NODE, {}, () => ({ version: '2.1' }));
let api: FakeApiServer;

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  const kubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  h.write(
    'strict.yaml',
    busyboxPod(
      'strict',
      "echo groups: $(id -G); trap 'exit 0' TERM; while true; do sleep 1; done",
      '  securityContext: {runAsUser: 1000, runAsGroup: 3000, supplementalGroups: [4000], supplementalGroupsPolicy: Strict}\n',
    ),
  );
  h.launch({ extraArgs: ['--v=2', `--kubeconfig=${kubeconfig}`] });
});

afterAll(async () => {
  await api?.dispose();
});

describe('supplementalGroupsPolicy on containerd 2.1', () => {
  it('the Node reports the feature, and a Strict pod runs with only its own groups, its user in the status', async () => {
    const node = await waitFor(
      () => {
        const n = api.object('nodes', '', NODE) as { status?: { features?: { supplementalGroupsPolicy?: boolean } } };
        return n?.status?.features ? n : undefined;
      },
      { timeoutMs: 30_000, what: 'the Node with status.features' },
    );
    expect(node.status!.features).toEqual({ supplementalGroupsPolicy: true });
    const mirror = await waitFor(
      () => {
        const p = api.pod('kube-system', `strict-${NODE}`);
        return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
      },
      { timeoutMs: 60_000, what: 'the Strict pod running, in its mirror' },
    );
    expect(mirror.status?.phase).toBe('Running');
    expect(mirror.status?.containerStatuses?.[0]?.user).toEqual({
      linux: { uid: 1000, gid: 3000, supplementalGroups: [3000, 4000] },
    });
    const [pod] = await h.pods('strict');
    const logPath = pod?.containers[0]?.logPath;
    expect(logPath).toBeTruthy();
    const line = await waitFor(() => fs.readFileSync(logPath!, 'utf8').match(/groups: ([\d ]+)/)?.[1], {
      timeoutMs: 10_000,
      what: 'the container’s groups in its log',
    });
    expect(line.trim().split(' ').sort()).toEqual(['3000', '4000']);
  });
});
