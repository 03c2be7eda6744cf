// A static pod restarted through the API: the packaged agent, a real containerd, the fake API
// server and real kubectl. `kubectl annotate pod <mirror> kubectl.kubernetes.io/restartedAt=<v>`
// restarts the containers once per value, also across an agent SIGKILL; a value set while the
// agent is down is acted on once when it is back.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RuntimeContainer } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'cp-restart';
const MIRROR = `sleeper-${NODE}`;
const h = useAgentHarness('restart-request', NODE, { extraArgs: ['--v=2'] });
let api: FakeApiServer;
let kubectl: Kubectl;
let nodeKubeconfig: string;

const manifest = `apiVersion: v1
kind: Pod
metadata: {name: sleeper, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;

const launch = () => h.launch({ extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`] });

async function running(): Promise<RuntimeContainer> {
  return waitFor(
    async () => (await h.pods('sleeper'))[0]?.containers.find((c) => c.state === ContainerState.CONTAINER_RUNNING),
    { timeoutMs: 60_000, what: 'sleeper running' },
  );
}

/** Every container instance the runtime holds for the pod (the agent keeps the newest dead one). */
async function instances(): Promise<RuntimeContainer[]> {
  return (await h.pods('sleeper')).flatMap((p) => p.containers);
}

function mirror(): Pod | undefined {
  return api.pod('kube-system', MIRROR);
}

async function restartingEvents(): Promise<{ reason: string; message: string; type: string; count?: number }[]> {
  const events = JSON.parse(await kubectl.ok(['get', 'events', '-n', 'kube-system', '-o', 'json'])) as {
    items: { reason: string; message: string; type: string; count?: number; involvedObject: { name: string } }[];
  };
  return events.items.filter((e) => e.involvedObject.name === MIRROR && e.reason === 'Restarting');
}

const annotate = (value: string) =>
  kubectl.ok([
    'annotate',
    '--overwrite',
    'pod',
    '-n',
    'kube-system',
    MIRROR,
    `kubectl.kubernetes.io/restartedAt=${value}`,
  ]);

/** No restart for a while: the running container stays the same (a negative check needs a window). */
async function staysRunning(id: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    expect((await running()).id).toBe(id);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  h.write('sleeper.yaml', manifest);
  launch();
});

afterAll(async () => {
  await api?.dispose();
});

describe('restarting a static pod through kubectl.kubernetes.io/restartedAt on its mirror', () => {
  let id: string;

  it('restarts the containers once for a new value, restartCount 1, with a Normal Restarting event', async () => {
    await waitFor(() => mirror()?.status?.phase === 'Running', { timeoutMs: 60_000, what: 'the mirror pod Running' });
    const first = await running();
    expect(first.meta.restartCount).toBe(0);
    const t0 = Date.now();
    await annotate('v1');
    const second = await waitFor(
      async () => {
        const c = await running();
        return c.id !== first.id ? c : undefined;
      },
      { timeoutMs: 30_000, what: 'a new container after restartedAt=v1' },
    );
    console.log(`annotate → new container running in ${Date.now() - t0} ms`);
    expect(second.meta.restartCount).toBe(1);
    expect(second.meta.restartedAt).toBe('v1');
    expect(fs.existsSync(path.join(h.podLogsDir, `kube-system_${MIRROR}_${second.meta.podUid}`, 'main', '1.log'))).toBe(
      true,
    );
    await waitFor(() => mirror()?.status?.containerStatuses?.[0]?.restartCount === 1, {
      timeoutMs: 30_000,
      what: 'restartCount 1 on the mirror',
    });
    const events = await waitFor(
      async () => {
        const e = await restartingEvents();
        return e.length > 0 ? e : undefined;
      },
      { timeoutMs: 30_000, what: 'the Restarting event' },
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Normal' });
    expect(events[0].message).toContain('kubectl.kubernetes.io/restartedAt=v1');
    id = second.id;
  });

  it('the same value again does not restart', async () => {
    await annotate('v1');
    await staysRunning(id, 4_000);
    expect((await running()).meta.restartCount).toBe(1);
  });

  it('an agent killed (SIGKILL) and started again does not restart for the value already acted on', async () => {
    await h.agent().kill('SIGKILL');
    const agent = launch();
    // The new agent has read the request off the mirror and handed it to the pod's worker.
    await agent.waitForLog(
      (r) => r.msg === 'Restart of the pod requested through the API' && r.value === 'v1',
      'the restart request read again by the new agent',
      30_000,
    );
    await staysRunning(id, 5_000);
    expect((await running()).meta.restartCount).toBe(1);
  });

  it('a value set while the agent is down is acted on exactly once when it is back', async () => {
    await h.agent().kill('SIGKILL');
    await annotate('v2');
    launch();
    const third = await waitFor(
      async () => {
        const c = await running();
        return c.id !== id ? c : undefined;
      },
      { timeoutMs: 60_000, what: 'a new container after restartedAt=v2' },
    );
    expect(third.meta.restartCount).toBe(2);
    expect(third.meta.restartedAt).toBe('v2');
    await staysRunning(third.id, 5_000);
    const all = await instances();
    expect(Math.max(...all.map((c) => c.meta.restartCount))).toBe(2);
    await waitFor(async () => (await restartingEvents()).some((e) => e.message.includes('restartedAt=v2')), {
      timeoutMs: 30_000,
      what: 'the Restarting event for v2',
    });
  });
});
