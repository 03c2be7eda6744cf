// SIGKILL the agent at random points while 20 pods are created, edited and deleted: after each
// restart the node must converge on the manifests with no pod lost, no orphan left and nothing
// ever running twice (the duplicate watch looks the whole time, not only at the end).
import { Site } from '../node.js';
import { sleeper } from '../pods.js';
import { pick, sleep, type Scenario, type ScenarioContext } from '../scenario.js';

const PODS = 20;
const CONVERGE_TIMEOUT_MS = 120_000;

export const agentKills: Scenario = {
  name: 'agent SIGKILL',
  about: 'SIGKILL the agent at random points while 20 pods are created, edited and deleted',
  needsNode: true,
  async run(ctx: ScenarioContext) {
    const iterations = ctx.short ? 10 : 100;
    const site = new Site(ctx.node, 'agent-kills');
    const editions = new Map<number, number>();
    for (let i = 0; i < PODS; i++) {
      editions.set(i, 1);
      site.write(`p${i}.yaml`, sleeper(`p${i}`, { edition: 1, grace: 2 }));
    }
    await site.launch();
    const first = await site.converge(CONVERGE_TIMEOUT_MS);
    if (first.ms === undefined) throw new Error(`the first 20 pods did not converge: ${JSON.stringify(first.last)}`);
    ctx.log(`20 pods running after ${Math.round(first.ms)} ms`);

    const converge: number[] = [];
    let kills = 0;
    let ops = 0;
    let lost = 0;
    let orphans = 0;
    let notConverged = 0;
    const r = ctx.random;

    /** Creates, edits and deletes pods for `durationMs`, at random moments. */
    const churn = async (durationMs: number): Promise<void> => {
      const end = performance.now() + durationMs;
      do {
        const i = Math.floor(r() * PODS);
        const e = editions.get(i);
        if (e === undefined) {
          editions.set(i, 1);
          site.write(`p${i}.yaml`, sleeper(`p${i}`, { edition: 1, grace: 2 }));
        } else if (r() < 0.7) {
          editions.set(i, e + 1);
          site.write(`p${i}.yaml`, sleeper(`p${i}`, { edition: e + 1, grace: 2 }));
        } else {
          editions.delete(i);
          site.remove(`p${i}.yaml`);
        }
        ops++;
        await sleep(r() * 400);
      } while (performance.now() < end);
    };

    for (let it = 0; it < iterations; it++) {
      // Changes start, and the agent dies somewhere in the middle of handling them; some changes
      // land while it is down.
      const killAfter = r() * 3000;
      const churning = churn(killAfter + r() * 1500);
      await sleep(killAfter);
      await site.stopAgent('SIGKILL');
      kills++;
      await churning;
      await site.launch();
      // Sometimes it dies again while starting up: reading manifests, adopting, half-way through.
      if (r() < 0.3) {
        await sleep(pick(r, [0, 200, 500, 1000, 2000]) + r() * 300);
        await site.stopAgent('SIGKILL');
        kills++;
        await site.launch();
      }
      const c = await site.converge(CONVERGE_TIMEOUT_MS);
      if (c.ms === undefined) {
        notConverged++;
        lost += c.last.lost.length;
        orphans += c.last.orphans.length;
        ctx.log(`iteration ${it}: not converged after ${CONVERGE_TIMEOUT_MS / 1000} s: ${JSON.stringify(c.last)}`);
      } else {
        converge.push(c.ms);
        if (c.ms > 5000)
          ctx.log(
            `iteration ${it}: converged after ${Math.round(c.ms)} ms; pending until then: ${JSON.stringify(c.lastPending)}`,
          );
      }
      if ((it + 1) % 10 === 0) ctx.log(`${it + 1}/${iterations} iterations, ${kills} kills, ${ops} changes`);
    }

    const left = await site.clear();
    const f = ctx.figures;
    f.value('SIGKILLs / manifest changes', `${kills} / ${ops}`);
    f.count('duplicate sandboxes or containers (seen at any time)', ctx.watch.incidents(site.nodeName).length);
    f.count('orphans once converged', orphans);
    f.count('pods left after their manifests went', left.orphans.length);
    f.value('stopped pods containerd refuses to remove (containerd#11037)', String(left.stuck.length));
    f.count('lost pods once converged', lost);
    f.count('restarts that did not converge in 120 s', notConverged);
    f.count('agent crashes / BUG lines', site.crashes.length + site.bugLines);
    f.times('restart → converged (20 pods)', converge);
  },
};
