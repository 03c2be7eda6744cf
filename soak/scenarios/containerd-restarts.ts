// Restart containerd under the agent, some of the times while a pod is terminating (its container
// takes 3 s to stop): the agent must stay up, lose no pod, leave no orphan and restart none of the
// containers that kept running under their shims.
import { ContainerState } from '../../src/cri/cri-types.js';
import { listRuntimePods } from '../../src/kuberuntime/runtime-pods.js';
import { Site } from '../node.js';
import { sleeper } from '../pods.js';
import { sleep, type Scenario, type ScenarioContext } from '../scenario.js';

const STEADY = 10;
const CONVERGE_TIMEOUT_MS = 120_000;

async function runningContainers(site: Site): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const p of (await listRuntimePods(site.runtime)).values()) {
    for (const c of p.containers)
      if (c.state === ContainerState.CONTAINER_RUNNING) out.set(`${p.name}/${c.name}`, c.id);
  }
  return out;
}

export const containerdRestarts: Scenario = {
  name: 'containerd restart',
  about: 'restart containerd under the agent, half of the times in the middle of a pod termination',
  needsNode: true,
  async run(ctx: ScenarioContext) {
    const restarts = ctx.short ? 3 : 20;
    const site = new Site(ctx.node, 'containerd-restarts');
    for (let i = 0; i < STEADY; i++) site.write(`s${i}.yaml`, sleeper(`s${i}`, { grace: 2 }));
    await site.launch();
    const first = await site.converge(CONVERGE_TIMEOUT_MS);
    if (first.ms === undefined) throw new Error(`the steady pods did not converge: ${JSON.stringify(first.last)}`);
    const steady = [...(await runningContainers(site))].filter(([k]) => /^s\d+-/.test(k));

    const converge: number[] = [];
    const downtime: number[] = [];
    let lost = 0;
    let orphans = 0;
    let notConverged = 0;
    let midTermination = 0;
    let unhealthy = 0;
    const r = ctx.random;
    for (let i = 0; i < restarts; i++) {
      let whileDown: (() => void) | undefined;
      if (i % 2 === 0) {
        // A pod slow to stop is removed; containerd goes away while the agent waits for it.
        site.write(`t${i}.yaml`, sleeper(`t${i}`, { grace: 10, stopDelay: 3 }));
        const up = await site.converge(CONVERGE_TIMEOUT_MS);
        if (up.ms === undefined) throw new Error(`t${i} did not start: ${JSON.stringify(up.last)}`);
        const since = site.must().mark;
        site.remove(`t${i}.yaml`);
        await site
          .must()
          .waitFor(
            (x) => x.msg === 'Killing container' && String(x.pod).startsWith(`default/t${i}-`),
            `t${i} being stopped`,
            30_000,
            since,
          );
        await sleep(r() * 1500);
        midTermination++;
      } else {
        // A pod is added while containerd is away: it must start once it is back.
        whileDown = () => site.write(`n${i}.yaml`, sleeper(`n${i}`, { grace: 2 }));
      }
      const t0 = performance.now();
      await ctx.node.cd.restart({
        signal: r() < 0.5 ? 'SIGTERM' : 'SIGKILL',
        whileDown: async () => {
          whileDown?.();
          await sleep(r() * 2000);
        },
      });
      downtime.push(performance.now() - t0);
      const c = await site.converge(CONVERGE_TIMEOUT_MS);
      if (c.ms === undefined) {
        notConverged++;
        lost += c.last.lost.length;
        orphans += c.last.orphans.length;
        ctx.log(`restart ${i}: not converged after ${CONVERGE_TIMEOUT_MS / 1000} s: ${JSON.stringify(c.last)}`);
      } else converge.push(c.ms);
      if (!site.must().alive || !(await site.healthz(5000))) unhealthy++;
      ctx.log(
        `restart ${i + 1}/${restarts}: containerd down ${Math.round(downtime.at(-1)!)} ms, converged ${c.ms === undefined ? 'never' : `${Math.round(c.ms)} ms`} after it was back`,
      );
    }
    const now = await runningContainers(site);
    const restarted = steady.filter(([k, id]) => now.get(k) !== id).length;
    const left = await site.clear();

    const f = ctx.figures;
    f.value('restarts (of which during a pod termination)', `${restarts} (${midTermination})`);
    f.count('agent crashes / BUG lines', site.crashes.length + site.bugLines);
    f.count('times the agent was not alive and answering healthz after', unhealthy);
    f.count('lost pods once converged', lost);
    f.count('orphans once converged (the terminated pods included)', orphans + left.orphans.length);
    f.count('steady containers restarted by the agent', restarted);
    f.count('duplicate sandboxes or containers (seen at any time)', ctx.watch.incidents(site.nodeName).length);
    f.count('restarts that did not converge in 120 s', notConverged);
    f.times('containerd stop → CRI ready again', downtime);
    f.times('containerd back → converged', converge);
  },
};
