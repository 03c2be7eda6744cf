// Many nodes against one API server (issue 31 point 8): 50 API sides of the agent, in-process, each with
// its own node identity, 4 static pods, no pod CIDR and a runtime network that is not ready (the case in
// which each node status round used to GET the Node: 12 requests per node per minute). Once every node
// is registered with its Lease, mirror pods and statuses, and has settled, every request of each node is
// counted for BENCH_API_NODES_SECONDS (default 300 s: one nodeStatusReportFrequency, so the periodic
// status report is in the window), with the connections it held.
//   npx tsx bench/api-many-nodes.ts
// A kubelet (v1.34) in the same steady state: its Lease renewed every 10 s (6 a minute), its status
// posted every nodeStatusReportFrequency (5 min: 0.2 a minute) when nothing changes, and its watches
// (its pods, its own Node, the non-headless Services, RuntimeClasses, CSIDrivers) each opened again every
// 5–10 min (about 0.13 a minute each): about 6.9 a minute.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Lease } from 'kubernetes-types/coordination/v1';
import type { Pod } from 'kubernetes-types/core/v1';
import { startApiSide, type ApiSide } from '../src/apiserver/api-side.js';
import { nullLogger } from '../src/log/logger.js';
import { connectionsOf, mostOpenAtOnce } from '../test/support/fake-apiserver/connection-counts.js';
import { startFakeApiServer, type RequestRecord } from '../test/support/fake-apiserver/index.js';
import { waitFor } from '../test/support/wait.js';
import { FakeStaticPods, FakeStatuses, fakeNodeInfo, runningStatus, staticPod } from '../test/e2e/apiserver/fakes.js';
import { KUBELET_REQUESTS_PER_MINUTE } from './api-pods.js';
import { runIfMain } from './report.js';

const NODES = Number(process.env.BENCH_API_NODES ?? 50);
const PODS_PER_NODE = 4;
const WINDOW_SECONDS = Number(process.env.BENCH_API_NODES_SECONDS ?? 300);
/** After every node converged: the start-up's last statuses and events are out of the window. */
const SETTLE_MS = 15_000;
const NETWORK_NOT_READY =
  'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized';

export interface ManyNodesBenchResult {
  nodes: number;
  seconds: number;
  /** Requests per node per minute in the window: the mean over the nodes, and the highest. */
  perNodePerMinute: { mean: number; max: number };
  /** Per minute per node, by kind of request. */
  byKind: Record<string, number>;
  /** GETs of a node's own Node in the window, all nodes together. */
  nodeGets: number;
  /** Connections per node: made in the window (most of any node), open at once (most of any node). */
  connections: { madeInWindow: number; mostOpenAtOnce: number };
}

function kindOf(r: RequestRecord): string {
  const watch = /(^|&)watch=(1|true)(&|$)/.test(r.query);
  if (r.path.includes('/leases/')) return `${r.method} lease`;
  if (r.path.startsWith('/api/v1/nodes'))
    return watch ? 'watch node' : `${r.method} node${r.path.endsWith('/status') ? ' status' : ''}`;
  if (r.path === '/api/v1/pods') return watch ? 'watch pods' : 'list pods';
  if (r.path.includes('/pods/')) return `${r.method} pod${r.path.endsWith('/status') ? ' status' : ''}`;
  return `${r.method} ${r.path}`;
}

export async function runManyNodesBench(): Promise<ManyNodesBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-api-nodes-'));
  const api = await startFakeApiServer();
  const agents: ApiSide[] = [];
  const names = Array.from({ length: NODES }, (_, i) => `bench-node-${i}`);
  try {
    const all: { name: string; pods: FakeStaticPods }[] = [];
    for (const name of names) {
      const user = `system:node:${name}`;
      const kubeconfig = api.writeKubeconfig(join(dir, `${name}.kubeconfig`), user, ['system:nodes']);
      const pods = new FakeStaticPods(
        ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']
          .slice(0, PODS_PER_NODE)
          .map((p) => staticPod(p, name)),
      );
      const statuses = new FakeStatuses();
      for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp));
      agents.push(
        startApiSide({
          kubeconfigPath: kubeconfig,
          nodeInfo: fakeNodeInfo(name, { networkNotReady: () => NETWORK_NOT_READY }),
          staticPods: pods,
          statuses,
          logger: nullLogger,
          // As the agent's wiring: the pod CIDR, once there is one, goes to the runtime.
          onPodCIDR: () => {},
        }),
      );
      all.push({ name, pods });
    }
    await waitFor(
      () =>
        all.every(({ name, pods }) => {
          const lease = api.object('leases', 'kube-node-lease', name) as unknown as Lease | undefined;
          if (!lease?.spec?.renewTime || !api.object('nodes', '', name)) return false;
          return pods.list().every((sp) => {
            const m = api.object('pods', sp.pod.metadata.namespace, sp.pod.metadata.name) as unknown as Pod | undefined;
            return m?.status?.phase === 'Running';
          });
        }),
      {
        timeoutMs: 120_000,
        intervalMs: 100,
        what: `${NODES} nodes registered with their Lease, mirror pods and statuses`,
      },
    );
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const from = api.requests.length;
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_SECONDS * 1000));
    const t1 = performance.now();
    const minutes = (t1 - t0) / 60_000;
    const window = api.requests.slice(from).filter((r) => r.receivedAt <= t1);
    const perNode = names.map((n) => window.filter((r) => r.user === `system:node:${n}`).length / minutes);
    const byKind: Record<string, number> = {};
    for (const r of window) if (r.user.startsWith('system:node:')) byKind[kindOf(r)] = (byKind[kindOf(r)] ?? 0) + 1;
    for (const k of Object.keys(byKind)) byKind[k] = byKind[k]! / minutes / NODES;
    const nodeGets = window.filter(
      (r) => r.method === 'GET' && names.some((n) => r.path === `/api/v1/nodes/${n}`),
    ).length;
    let madeInWindow = 0;
    let mostOpen = 0;
    for (const n of names) {
      const cs = connectionsOf(api, `system:node:${n}`);
      madeInWindow = Math.max(madeInWindow, cs.filter((c) => c.openedAt >= t0 && c.openedAt <= t1).length);
      mostOpen = Math.max(mostOpen, mostOpenAtOnce(cs));
    }
    return {
      nodes: NODES,
      seconds: (t1 - t0) / 1000,
      perNodePerMinute: { mean: perNode.reduce((a, b) => a + b, 0) / NODES, max: Math.max(...perNode) },
      byKind,
      nodeGets,
      connections: { madeInWindow, mostOpenAtOnce: mostOpen },
    };
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
    await api.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printManyNodesBench(r: ManyNodesBenchResult): void {
  const f = (n: number): string => n.toFixed(2);
  const verdict = r.perNodePerMinute.mean <= KUBELET_REQUESTS_PER_MINUTE ? 'ok' : 'OVER TARGET';
  console.log(
    `${r.nodes} nodes, no pod CIDR, network not ready, steady state over ${r.seconds.toFixed(0)} s: ${f(r.perNodePerMinute.mean)} requests per node per minute (highest ${f(r.perNodePerMinute.max)}; a kubelet ~${KUBELET_REQUESTS_PER_MINUTE}) ${verdict}`,
  );
  console.log(
    `  per node per minute: ${Object.entries(r.byKind)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${f(v)}`)
      .join(', ')}; GETs of the Node: ${r.nodeGets}`,
  );
  console.log(
    `  connections per node: at most ${r.connections.mostOpenAtOnce} open at once, at most ${r.connections.madeInWindow} made in the window`,
  );
}

runIfMain(import.meta.url, runManyNodesBench, printManyNodesBench);
