// A Node of our name that exists already (a re-installed node, or one pre-created by an admin) is
// taken over as the kubelet does: its UID kept, our default labels reconciled, others' labels and
// taints left alone. With registerNode false, the agent waits for the Node instead of creating it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiSide, type ApiSide } from '../../../src/apiserver/api-side.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { FakeStaticPods, FakeStatuses, fakeNodeInfo, runningStatus, staticPod } from './fakes.js';

const dir = useTmpDir('apiserver-takeover');
let api: FakeApiServer;
const agents: ApiSide[] = [];

beforeAll(async () => {
  api = await startFakeApiServer();
});
afterAll(async () => {
  for (const a of agents) await a.stop();
  await api?.dispose();
});

function start(node: string, registerNode = true): { agent: ApiSide; lines: string[] } {
  const kubeconfigPath = api.writeKubeconfig(join(dir, `${node}.kubeconfig`), `system:node:${node}`, ['system:nodes']);
  const pods = new FakeStaticPods([staticPod('etcd', node)]);
  const statuses = new FakeStatuses();
  statuses.set(pods.list()[0].uid, runningStatus(pods.list()[0]));
  const log = memoryLogger(2);
  const agent = startApiSide({
    kubeconfigPath,
    nodeInfo: fakeNodeInfo(node),
    staticPods: pods,
    statuses,
    logger: log.logger,
    registerNode,
    requestTimeoutMs: 2000,
  });
  agents.push(agent);
  return { agent, lines: log.lines };
}

describe('an existing Node', () => {
  it('is taken over: same UID, default labels reconciled, others kept, taints untouched, status ours', async () => {
    const seeded = api.seedObject('nodes', {
      metadata: { name: 'old-1', labels: { 'kubernetes.io/hostname': 'stale', 'team.example.com/owner': 'infra' } },
      spec: { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] },
      status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] },
    });
    start('old-1');
    await waitFor(
      () =>
        api.object('nodes', '', 'old-1')?.metadata.labels &&
        (
          api.object('nodes', '', 'old-1')!.status as { conditions: { type: string; status: string }[] }
        ).conditions.find((c) => c.type === 'Ready')?.status === 'True',
      {
        timeoutMs: 15_000,
        what: 'old-1 Ready',
      },
    );
    const node = api.object('nodes', '', 'old-1')!;
    expect(node.metadata.uid).toBe(seeded.metadata.uid);
    expect(node.metadata.labels).toMatchObject({
      'kubernetes.io/hostname': 'old-1',
      'kubernetes.io/os': 'linux',
      'team.example.com/owner': 'infra',
    });
    expect((node.spec as { taints: unknown[] }).taints).toEqual([
      { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
    ]);
    await waitFor(() => api.object('pods', 'kube-system', 'etcd-old-1'), {
      timeoutMs: 15_000,
      what: 'the mirror pod on the taken-over node',
    });
  });

  it('with registerNode false, waits for the Node, then uses it', async () => {
    const { lines } = start('later-1', false);
    // The agent has looked for its Node twice and found none: twice it had the chance to create it.
    const lookedFor = () =>
      api.requests.filter(
        (r) =>
          r.user === 'system:node:later-1' &&
          r.method === 'GET' &&
          r.path === '/api/v1/nodes/later-1' &&
          r.status === 404,
      ).length;
    await waitFor(() => lookedFor() >= 2 || api.object('nodes', '', 'later-1'), {
      timeoutMs: 30_000,
      what: 'two looks for the Node later-1, answered 404',
    });
    expect(
      api.requests.filter((r) => r.user === 'system:node:later-1' && r.method === 'POST' && r.path === '/api/v1/nodes'),
    ).toEqual([]);
    expect(api.object('nodes', '', 'later-1')).toBeUndefined();
    api.seedObject('nodes', { metadata: { name: 'later-1' } });
    await waitFor(
      () => api.object('pods', 'kube-system', 'etcd-later-1') && api.object('leases', 'kube-node-lease', 'later-1'),
      { timeoutMs: 90_000, what: 'mirror pod and lease once the Node exists' },
    );
    expect(lines.filter((l) => l.includes('"severity":"warning"')).length).toBeLessThanOrEqual(1);
  });
});
