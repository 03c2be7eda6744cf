// The API server coming up under an agent with 50 static pods, as on a node where kubeadm init
// starts kube-apiserver: first listening but not ready (/readyz 500), then ready. The agent asks
// about every 250 ms, sends nothing before ready, then sends node, lease, mirror pods and statuses
// side by side, as many at once as the queues allow (8 pods, the node, the lease, one event), all
// as streams of one HTTP/2 connection.
import { join } from 'node:path';
import type { Lease } from 'kubernetes-types/coordination/v1';
import type { Node } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiSide, type ApiSide } from '../../../src/apiserver/api-side.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { startFakeApiServer, type FakeApiServer, type RequestRecord } from '../../support/fake-apiserver/index.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { FakeStaticPods, FakeStatuses, fakeNodeInfo, runningStatus, staticPod } from './fakes.js';

const NODE = 'conv-1';
const USER = `system:node:${NODE}`;
const dir = useTmpDir('apiserver-convergence');
const log = memoryLogger(2);
const pods = new FakeStaticPods(Array.from({ length: 50 }, (_, i) => staticPod(`static-${i}`, NODE)));
const statuses = new FakeStatuses();
let api: FakeApiServer;
let agent: ApiSide | undefined;

beforeAll(async () => {
  api = await startFakeApiServer();
  api.writeKubeconfig(join(dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  await api.stop();
  for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp));
});

afterAll(async () => {
  await agent?.stop();
  await api?.dispose();
});

function converged(): boolean {
  const node = api.object('nodes', '', NODE) as unknown as Node | undefined;
  const lease = api.object('leases', 'kube-node-lease', NODE) as unknown as Lease | undefined;
  return (
    node?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' &&
    lease?.spec?.holderIdentity === NODE &&
    pods.list().every((sp) => {
      const m = api.pod(sp.pod.metadata.namespace, sp.pod.metadata.name);
      return m?.metadata?.annotations?.['kubernetes.io/config.mirror'] === sp.uid && m.status?.phase === 'Running';
    })
  );
}

/** The most requests the server had open at once. */
function peakInFlight(reqs: RequestRecord[]): number {
  const edges = reqs.flatMap((r) => [
    { at: r.receivedAt, d: 1 },
    { at: r.closedAt ?? Infinity, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let peak = 0;
  for (const e of edges) peak = Math.max(peak, (open += e.d));
  return peak;
}

describe('an API server that comes up under 50 static pods', () => {
  it('is asked about every 250 ms while it listens but is not ready, and gets no writes', async () => {
    agent = startApiSide({
      kubeconfigPath: join(dir, 'node.kubeconfig'),
      nodeInfo: fakeNodeInfo(NODE),
      staticPods: pods,
      statuses,
      logger: log.logger,
      requestTimeoutMs: 5000,
    });
    await waitFor(() => log.lines.some((l) => l.includes('API server not reachable yet')), {
      timeoutMs: 10_000,
      what: 'the agent to find no server',
    });
    api.notReady(true);
    await api.start();
    const from = api.requests.length;
    // The window is the time of 9 answered probes: each could have let writes through.
    const probes = (): RequestRecord[] =>
      api.requests.slice(from).filter((r) => r.path === '/readyz' && r.status !== 0);
    await waitFor(() => probes().length >= 9, { timeoutMs: 30_000, what: '9 answered /readyz probes while not ready' });
    const window = api.requests.slice(from);
    const seen = probes();
    const gaps = seen.slice(1).map((r, i) => r.receivedAt - seen[i]!.receivedAt);
    const span = seen.at(-1)!.receivedAt - seen[0]!.receivedAt;
    console.log(
      `${seen.length} /readyz probes over ${span.toFixed(0)} ms while not ready; gaps ${gaps.map((g) => g.toFixed(0)).join(' ')} ms`,
    );
    // 200–250 ms apart (timers on a loaded machine fire late, never early): 8 gaps span 1.6–2 s. A
    // back-off growing to 1 s would span more than 4 s; probing with no pause, a few ms.
    expect(span).toBeGreaterThanOrEqual(8 * 190);
    expect(span).toBeLessThanOrEqual(8 * 400);
    expect(seen.every((r) => r.status === 500)).toBe(true);
    expect(window.filter((r) => r.path !== '/readyz')).toEqual([]);
    expect(agent.state().connected).toBe(false);
  });

  it("once ready, converges with node, lease, mirror pods and statuses in flight together, within the queues' limits on one connection", async () => {
    api.setLatency(100); // every request takes 100 ms: one after another, the ~105 requests would take > 10 s
    const from = api.requests.length;
    const t0 = performance.now();
    api.notReady(false);
    await waitFor(converged, { timeoutMs: 60_000, what: 'node, lease, 50 mirror pods with status' });
    console.log(
      `converged ${(performance.now() - t0).toFixed(0)} ms after the server became ready (100 ms per request)`,
    );
    api.setLatency(0);
    const ours = api.requests.slice(from).filter((r) => r.user === USER && !/(^|&)watch=/.test(r.query));
    if (process.env.DEBUG_TIMELINE)
      for (const r of ours)
        console.log(`${(r.receivedAt - t0).toFixed(0)} → ${((r.closedAt ?? 0) - t0).toFixed(0)} ${r.method} ${r.path}`);
    const peak = peakInFlight(ours);
    expect(peak).toBeGreaterThanOrEqual(8);
    // 8 pods, the node, the lease and one event at a time (+ a probe): HTTP/2 streams, not sockets, so
    // the queues' limits are the bound.
    expect(peak).toBeLessThanOrEqual(12);
    expect(new Set(api.requests.slice(from).map((r) => r.connection)).size).toBe(1);
    // The lease is not queued behind the mirror pods: it is written while they are.
    const lease = ours.filter((r) => r.path.includes('/leases'));
    const mirrorWrites = ours.filter((r) => r.method !== 'GET' && r.path.includes('/pods'));
    expect(lease.length).toBeGreaterThan(0);
    expect(Math.min(...lease.map((r) => r.receivedAt))).toBeLessThan(
      Math.max(...mirrorWrites.map((r) => r.receivedAt)),
    );
    // One create and one status patch per pod: nothing sent twice.
    expect(mirrorWrites.filter((r) => r.method === 'POST')).toHaveLength(50);
    expect(mirrorWrites.filter((r) => r.method === 'PATCH')).toHaveLength(50);
    expect(log.lines.filter((l) => l.includes('"severity":"warning"'))).toEqual([]);
  });
});
