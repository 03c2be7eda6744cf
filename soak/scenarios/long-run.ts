// A long run: 30 pods, a container killed every minute, the agent restarted every 10 minutes
// (SIGTERM and SIGKILL in turn). The agent's resident memory and open descriptors are sampled
// every 5 minutes and reported as a series; every crash must be restarted, and at the end the node
// must match its manifests with nothing lost, orphaned or duplicated.
import { ContainerState } from '../../src/cri/cri-types.js';
import { listRuntimePods } from '../../src/kuberuntime/runtime-pods.js';
import { Site } from '../node.js';
import { sleeper } from '../pods.js';
import { openFds, rssBytes } from '../proc.js';
import { sleep, type Scenario, type ScenarioContext } from '../scenario.js';

const PODS = 30;

interface Sample {
  readonly atMs: number;
  readonly agent: number;
  readonly rss: number;
  readonly fds: number;
}

export const longRun: Scenario = {
  name: 'long run',
  about: '30 pods for an hour, a container crash every minute, an agent restart every 10 minutes: RSS and fds flat',
  needsNode: true,
  besideOthersInShort: true,
  async run(ctx: ScenarioContext) {
    const durationMs = ctx.short ? 120_000 : 3_600_000;
    const crashEveryMs = ctx.short ? 20_000 : 60_000;
    const restartEveryMs = ctx.short ? 60_000 : 600_000;
    const sampleEveryMs = ctx.short ? 20_000 : 300_000;
    const r = ctx.random;
    const site = new Site(ctx.node, 'long-run');
    for (let i = 0; i < PODS; i++) site.write(`l${i}.yaml`, sleeper(`l${i}`, { grace: 2 }));
    await site.launch();
    const up = await site.converge();
    if (up.ms === undefined) throw new Error(`the 30 pods did not start: ${JSON.stringify(up.last)}`);

    const samples: Sample[] = [];
    const t0 = Date.now();
    const sample = (): void => {
      const a = site.must();
      samples.push({
        atMs: Date.now() - t0,
        agent: site.agents.length,
        rss: rssBytes(a.pid) ?? 0,
        fds: openFds(a.pid) ?? 0,
      });
    };
    sample();
    let crashes = 0;
    let notRestarted = 0;
    let restarts = 0;
    let nextCrash = t0 + crashEveryMs;
    let nextRestart = t0 + restartEveryMs;
    let nextSample = t0 + sampleEveryMs;
    const restartedIn: number[] = [];
    while (Date.now() - t0 < durationMs) {
      const now = Date.now();
      if (now >= nextSample) {
        sample();
        nextSample += sampleEveryMs;
      }
      if (now >= nextRestart) {
        // Sampled just before, so each agent's last figures are in the series.
        sample();
        await site.stopAgent(restarts % 2 === 0 ? 'SIGTERM' : 'SIGKILL');
        await site.launch();
        restarts++;
        nextRestart += restartEveryMs;
      }
      if (now >= nextCrash) {
        nextCrash += crashEveryMs;
        const pods = [...(await listRuntimePods(site.runtime)).values()].filter((p) =>
          p.name.endsWith(`-${site.nodeName}`),
        );
        const victims = pods.flatMap((p) =>
          p.containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => ({ pod: p, c })),
        );
        const v = victims[Math.floor(r() * victims.length)];
        if (v) {
          const pid = Number(
            (await ctx.node.cd.ctr(['tasks', 'ls']))
              .split('\n')
              .find((l) => l.startsWith(v.c.id))
              ?.trim()
              .split(/\s+/)[1],
          );
          if (pid > 0) {
            process.kill(pid, 'SIGKILL');
            crashes++;
            const killedAt = Date.now();
            // The crash-loop back-off starts at 10 s; the replacement must come well within a minute.
            const back = await (async () => {
              while (Date.now() - killedAt < 60_000) {
                const p = (await listRuntimePods(site.runtime)).get(v.pod.uid);
                if (
                  p?.containers.some(
                    (c) =>
                      c.name === v.c.name &&
                      c.state === ContainerState.CONTAINER_RUNNING &&
                      c.meta.restartCount > v.c.meta.restartCount,
                  )
                )
                  return true;
                await sleep(200);
              }
              return false;
            })();
            if (back) restartedIn.push(Date.now() - killedAt);
            else notRestarted++;
          }
        }
      }
      await sleep(500);
    }
    sample();
    const end = await site.converge();
    const left = await site.clear();

    const f = ctx.figures;
    const mins = (ms: number) => `${Math.round(ms / 60_000)}′`;
    f.value(
      `${Math.round(durationMs / 60_000)} min, ${PODS} pods: containers killed / agent restarts`,
      `${crashes} / ${restarts}`,
    );
    f.count('killed containers not restarted within 60 s', notRestarted);
    f.times('container killed → its replacement running (crash-loop back-off 10 s)', restartedIn);
    f.count(
      'lost or orphaned pods at the end',
      end.ms === undefined ? end.last.lost.length + end.last.orphans.length : 0,
    );
    f.count('pods left after their manifests went', left.orphans.length);
    f.count('duplicate sandboxes or containers (seen at any time)', ctx.watch.incidents(site.nodeName).length);
    f.count('agent crashes / BUG lines', site.crashes.length + site.bugLines);
    f.value(
      'agent RSS over time (MiB; #n = nth agent)',
      samples.map((s) => `${mins(s.atMs)} ${(s.rss / 2 ** 20).toFixed(0)}#${s.agent}`).join(', '),
    );
    f.value('agent open fds over time', samples.map((s) => `${mins(s.atMs)} ${s.fds}#${s.agent}`).join(', '));
    // Flat: each agent's last sample against its first, for those that lived long enough to tell.
    const growth = [...new Set(samples.map((s) => s.agent))]
      .map((a) => {
        const own = samples.filter((s) => s.agent === a);
        return { rss: own.at(-1)!.rss - own[0]!.rss, fds: own.at(-1)!.fds - own[0]!.fds, n: own.length };
      })
      .filter((g) => g.n >= 2);
    const maxRss = Math.max(0, ...growth.map((g) => g.rss));
    const maxFds = Math.max(0, ...growth.map((g) => g.fds));
    f.value(
      'largest growth within one agent’s life: RSS / fds',
      `${(maxRss / 2 ** 20).toFixed(1)} MiB / ${maxFds}`,
      '≤ 10 MiB / ≤ 5',
      maxRss <= 10 * 2 ** 20 && maxFds <= 5,
    );
  },
};
