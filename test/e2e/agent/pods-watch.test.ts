// One pods watch per node, as a kubelet holds one (issues 17 and 20): the packaged agent with a
// static pod (its mirror) and an API pod, against the fake API server, counting the node's pods
// LISTs and WATCHes. One LIST at start and one watch open at a time; a watch that ends as its
// timeout says is opened again with no LIST; a 410 (etcd compacted past the agent's
// resourceVersion) costs exactly one LIST. Before, the API pod source and the mirror pod cache each
// held a watch of their own and paid every re-watch and 410 twice.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer, type RequestRecord } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';

const NODE = 'pods-watch-e2e';
const h = useAgentHarness('pods-watch', NODE);
let api: FakeApiServer;

const command = ['sh', '-c', SLEEP_LOOP];

const staticWeb = busyboxPod('web', SLEEP_LOOP);

const isNodePods = (r: RequestRecord): boolean =>
  r.method === 'GET' &&
  r.path === '/api/v1/pods' &&
  r.user === `system:node:${NODE}` &&
  new URLSearchParams(r.query).get('fieldSelector') === `spec.nodeName=${NODE}`;
const isWatch = (r: RequestRecord): boolean =>
  new URLSearchParams(r.query).get('watch') === 'true' || new URLSearchParams(r.query).get('watch') === '1';
const podLists = (): RequestRecord[] => api.requests.filter((r) => isNodePods(r) && !isWatch(r));
const podWatches = (): RequestRecord[] => api.requests.filter((r) => isNodePods(r) && isWatch(r));
const openWatches = (): RequestRecord[] => podWatches().filter((r) => r.closedAt === undefined);

/**
 * The most pods watches of the node open at one moment. A watch the server ended and the next one
 * may overlap by the time the server takes to see its stream closed, so 250 ms of overlap is not
 * counted; two watches held side by side (the old two consumers) overlap for their whole life.
 */
function mostOpenAtOnce(): number {
  const ws = podWatches();
  let most = 0;
  for (const w of ws) {
    const open = ws.filter(
      (o) => o.receivedAt <= w.receivedAt && (o.closedAt === undefined || o.closedAt > w.receivedAt + 250),
    );
    most = Math.max(most, open.length);
  }
  return most;
}

async function runningContainer(name: string): Promise<string | undefined> {
  const runtime = h.cri().runtime;
  for (const p of (await listRuntimePods(runtime)).values()) {
    if (p.name !== name || p.namespace !== 'kube-system') continue;
    const full = await readRuntimePod(runtime, p.uid);
    const c = full?.containers.find((x) => x.state === ContainerState.CONTAINER_RUNNING);
    if (c) return c.id;
  }
  return undefined;
}

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  const kubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  h.write('web.yaml', staticWeb);
  h.launch({ extraArgs: ['--v=4', `--kubeconfig=${kubeconfig}`] });
});

afterAll(async () => {
  if (process.env.SHOW_AGENT_LOG) console.log(h.agent().lines.slice(-80).join('\n'));
  await api?.dispose();
});

describe('one pods watch per node', () => {
  it('a static pod and an API pod: one LIST at start, one watch open', async () => {
    await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
    api.seedObject('pods', {
      metadata: { name: 'proxy', namespace: 'kube-system' },
      spec: {
        nodeName: NODE,
        hostNetwork: true,
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'main', image: TEST_IMAGES.busybox, command, imagePullPolicy: 'IfNotPresent' }],
      },
    });
    await waitFor(() => runningContainer('proxy'), { timeoutMs: 60_000, what: 'the API pod running' });
    await waitFor(() => runningContainer(`web-${NODE}`), { timeoutMs: 60_000, what: 'the static pod running' });
    await waitFor(() => api.object('pods', 'kube-system', `web-${NODE}`), {
      timeoutMs: 30_000,
      what: 'the mirror pod',
    });
    await waitFor(
      () =>
        (api.object('pods', 'kube-system', 'proxy') as { status?: { phase?: string } } | undefined)?.status?.phase ===
        'Running',
      { timeoutMs: 30_000, what: 'the API pod Running in the API' },
    );
    console.log(
      `at start: ${podLists().length} pods LIST, ${podWatches().length} pods WATCH, ${openWatches().length} open`,
    );
    expect(podLists()).toHaveLength(1);
    expect(openWatches()).toHaveLength(1);
    expect(mostOpenAtOnce()).toBe(1);
  });

  it('a watch that ends as its timeout says is opened again with no LIST', async () => {
    const watchesBefore = podWatches().length;
    api.timeOutWatches();
    await waitFor(
      () =>
        podWatches().length === watchesBefore + 1 &&
        openWatches().length === 1 &&
        openWatches()[0] === podWatches().at(-1),
      { timeoutMs: 30_000, what: 'the pods watch opened again' },
    );
    const rv = new URLSearchParams(podWatches().at(-1)!.query).get('resourceVersion');
    expect(rv).toMatch(/^[1-9]\d*$/);
    expect(podLists()).toHaveLength(1);
    expect(mostOpenAtOnce()).toBe(1);
  });

  it('a 410 costs exactly one LIST, and the pods keep running', async () => {
    const apiPodBefore = await runningContainer('proxy');
    const mirrorUid = api.object('pods', 'kube-system', `web-${NODE}`)?.metadata.uid;
    const watchesBefore = podWatches().length;
    api.compact();
    // The watch ends; the next one, from the old resourceVersion, is told 410; one LIST; a watch from it.
    await waitFor(
      () =>
        podLists().length === 2 &&
        openWatches().length === 1 &&
        openWatches()[0]!.receivedAt > podLists()[1]!.receivedAt,
      { timeoutMs: 60_000, what: 'a LIST and a watch after the 410' },
    );
    const after = podWatches().slice(watchesBefore);
    console.log(
      `after the 410: ${after.length} pods WATCH (${after.map((w) => new URLSearchParams(w.query).get('resourceVersion')).join(', ')}), ${podLists().length - 1} more LIST`,
    );
    expect(after.length).toBe(2);
    expect(podLists()).toHaveLength(2);
    expect(mostOpenAtOnce()).toBe(1);
    expect(await runningContainer('proxy')).toBe(apiPodBefore);
    expect(api.object('pods', 'kube-system', `web-${NODE}`)?.metadata.uid).toBe(mirrorUid);
  });
});
