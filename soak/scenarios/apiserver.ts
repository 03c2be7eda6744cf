// The API server flapping every few seconds (stopped: connections cut, refused), then hung
// (accepting and never answering), while static pods come and go: no pod may restart because of
// it, the agent's memory must stay flat, and once the server settles the node, its lease, the
// mirror pods and their statuses must be right within 2 s.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Lease } from 'kubernetes-types/coordination/v1';
import type { Node, Pod } from 'kubernetes-types/core/v1';
import { ContainerState, PodSandboxState } from '../../src/cri/cri-types.js';
import { listRuntimePods } from '../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../test/support/fake-apiserver/index.js';
import { Site } from '../node.js';
import { sleeper } from '../pods.js';
import { rssBytes } from '../proc.js';
import { sleep, type Scenario, type ScenarioContext } from '../scenario.js';
import { fmtMiB } from '../table.js';

const STEADY = 5;

/** Every sandbox and container that runs, with its restart count: what must not move. */
async function runningSet(site: Site): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const p of (await listRuntimePods(site.runtime)).values()) {
    if (!p.name.endsWith(`-${site.nodeName}`)) continue;
    for (const s of p.sandboxes) if (s.state === PodSandboxState.SANDBOX_READY) out.set(`${p.name} sandbox`, s.id);
    for (const c of p.containers)
      if (c.state === ContainerState.CONTAINER_RUNNING)
        out.set(`${p.name}/${c.name}`, `${c.id} #${c.meta.restartCount}`);
  }
  return out;
}

/** The lease is renewed every quarter of its 40 s duration: a healthy node's is never older than that. */
const LEASE_RENEW_MS = 10_000;

/**
 * Whether the server shows the node as it is: Ready, its lease as fresh as a healthy node's (an
 * outage the agent never noticed, between two renewals, needs no renewal), a mirror pod for each
 * static pod and no other, each with the status of the containers that run.
 */
async function apiMatches(api: FakeApiServer, site: Site): Promise<string | true> {
  const node = api.object('nodes', '', site.nodeName) as unknown as Node | undefined;
  if (node?.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') return 'node not Ready';
  const lease = api.object('leases', 'kube-node-lease', site.nodeName) as unknown as Lease | undefined;
  const renewed = lease?.spec?.renewTime ? Date.parse(String(lease.spec.renewTime)) : 0;
  if (renewed < Date.now() - LEASE_RENEW_MS - 1000) return 'lease older than a renewal period';
  const expected = site.expected();
  const mirrors = (api.objects('pods') as unknown as Pod[]).filter((m) => m.spec?.nodeName === site.nodeName);
  if (mirrors.length !== expected.size) return `${mirrors.length} mirror pods for ${expected.size} static pods`;
  const running = new Map<string, string>();
  for (const p of (await listRuntimePods(site.runtime)).values()) {
    for (const c of p.containers)
      if (c.state === ContainerState.CONTAINER_RUNNING) running.set(`${p.uid}/${c.name}`, `containerd://${c.id}`);
  }
  for (const e of expected.values()) {
    const m = mirrors.find((x) => `${x.metadata?.namespace}/${x.metadata?.name}` === e.key);
    if (!m) return `no mirror pod for ${e.key}`;
    if (m.metadata?.annotations?.['kubernetes.io/config.mirror'] !== e.uid)
      return `mirror of ${e.key} is of another version`;
    if (m.status?.phase !== 'Running') return `${e.key} not Running on the server`;
    for (const name of e.containers) {
      const cs = m.status.containerStatuses?.find((c) => c.name === name);
      if (!cs?.state?.running || cs.containerID !== running.get(`${e.uid}/${name}`))
        return `${e.key}/${name} status differs`;
    }
  }
  return true;
}

/** Time from `since` until the server matches the node (undefined: not within the deadline). */
async function apiConverged(
  api: FakeApiServer,
  site: Site,
  since: number,
  timeoutMs = 60_000,
): Promise<{ ms?: number; last: string; trace: string }> {
  let last = '';
  const trace: string[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await apiMatches(api, site);
    if (r === true) return { ms: Date.now() - since, last: 'converged', trace: trace.join('; ') };
    if (r !== last) trace.push(`+${Date.now() - since} ms ${r}`);
    last = r;
    await sleep(20);
  }
  return { last, trace: trace.join('; ') };
}

export const apiServerChaos: Scenario = {
  name: 'API server chaos',
  about: 'the API server flapping every few seconds, then hung: no restarts caused, memory flat, converged within 2 s',
  needsNode: true,
  besideOthersInShort: true,
  async run(ctx: ScenarioContext) {
    const flapMs = ctx.short ? 60_000 : 600_000;
    const hangMs = ctx.short ? 15_000 : 60_000;
    const r = ctx.random;
    const site = new Site(ctx.node, 'apiserver');
    fs.mkdirSync(path.join(site.dir, 'api'), { recursive: true });
    const api = await startFakeApiServer({ dir: path.join(site.dir, 'api') });
    const f = ctx.figures;
    try {
      const kubeconfig = api.writeKubeconfig(path.join(site.dir, 'node.kubeconfig'), `system:node:${site.nodeName}`, [
        'system:nodes',
      ]);
      for (let i = 0; i < STEADY; i++)
        site.write(`a${i}.yaml`, sleeper(`a${i}`, { namespace: 'kube-system', grace: 1 }));
      await site.launch([`--kubeconfig=${kubeconfig}`]);
      const up = await site.converge();
      if (up.ms === undefined) throw new Error(`the pods did not start: ${JSON.stringify(up.last)}`);
      const first = await apiConverged(api, site, Date.now() - 60_000);
      if (first.ms === undefined) throw new Error(`the API side did not converge at first: ${first.last}`);
      const before = await runningSet(site);
      const agent = site.must();
      const rss: number[] = [];
      const sample = () => rss.push(rssBytes(agent.pid) ?? 0);
      sample();

      // Flapping: up 2-5 s, down 1-4 s; a static pod added or removed every ~20 s meanwhile.
      let flaps = 0;
      let changes = 0;
      let extra = 0;
      let nextChange = Date.now() + 20_000;
      let backAt = Date.now();
      const end = Date.now() + flapMs;
      while (Date.now() < end) {
        await sleep(2000 + r() * 3000);
        await api.stop();
        flaps++;
        await sleep(1000 + r() * 3000);
        await api.start();
        backAt = Date.now();
        if (Date.now() > nextChange) {
          if (extra > 0 && r() < 0.5) site.remove(`extra${--extra}.yaml`);
          else site.write(`extra${extra++}.yaml`, sleeper(`extra${extra - 1}`, { namespace: 'kube-system', grace: 1 }));
          changes++;
          nextChange = Date.now() + 20_000;
        }
        sample();
      }
      // From the moment the server is back for good.
      const afterFlap = await apiConverged(api, site, backAt);
      ctx.log(
        `after the flapping: ${afterFlap.ms === undefined ? 'not converged' : `converged in ${afterFlap.ms} ms`}; waited for: ${afterFlap.trace || 'nothing'}`,
      );

      // Hung: connections accepted, nothing answered; a pod added meanwhile.
      api.hang(true);
      site.write('during-hang.yaml', sleeper('during-hang', { namespace: 'kube-system', grace: 1 }));
      const hangEnd = Date.now() + hangMs;
      while (Date.now() < hangEnd) {
        await sleep(1000);
        sample();
      }
      api.hang(false);
      const unhungAt = Date.now();
      const afterHang = await apiConverged(api, site, unhungAt);
      ctx.log(
        `after the hang: ${afterHang.ms === undefined ? 'not converged' : `converged in ${afterHang.ms} ms`}; waited for: ${afterHang.trace || 'nothing'}`,
      );
      sample();

      const after = await runningSet(site);
      const moved = [...before].filter(([k, v]) => after.get(k) !== v).map(([k]) => k);
      if (moved.length > 0) ctx.log(`restarted: ${moved.join(', ')}`);
      f.value(`flaps in ${flapMs / 60_000} min / static pod changes meanwhile`, `${flaps} / ${changes}`);
      f.count('pod restarts caused (sandboxes or containers that changed)', moved.length);
      f.count('agent crashes / BUG lines', site.crashes.length + site.bugLines);
      f.count('duplicate sandboxes or containers (seen at any time)', ctx.watch.incidents(site.nodeName).length);
      f.time('flapping over → node, lease, mirror pods and statuses right', afterFlap.ms, 2000);
      f.time(`hung ${hangMs / 1000} s, answering again → all right`, afterHang.ms, 2000);
      const max = Math.max(...rss);
      f.value(
        'agent RSS: start → max → end',
        `${fmtMiB(rss[0]!)} → ${fmtMiB(max)} → ${fmtMiB(rss.at(-1)!)}`,
        '≤ start + 10 MiB',
        rss.at(-1)! <= rss[0]! + 10 * 1024 * 1024,
      );
    } finally {
      await site.stopAgent('SIGTERM');
      await api.dispose();
    }
    const left = await site.clear();
    f.count('pods left after their manifests went', left.orphans.length);
  },
};
