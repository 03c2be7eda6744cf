// inotify under pressure: (a) 10,000 files created in a burst in a directory inside the manifest
// directory, with pod changes right behind them; (b) the kernel's event queue of the manifest
// directory overflowing (max_queued_events) while pod changes happen, so that their events are
// lost: the periodic rescan must find them. No pod lost or duplicated either way.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Site } from '../node.js';
import { sleeper } from '../pods.js';
import { rssBytes } from '../proc.js';
import type { Scenario, ScenarioContext } from '../scenario.js';
import { fmtMiB } from '../table.js';

const STEADY = 10;
const BURST_FILES = 10_000;

function maxQueuedEvents(): number {
  return Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
}

export const inotifyOverflow: Scenario = {
  name: 'inotify overflow',
  about: '10,000 files in a burst beside the manifests, and an overflowed inotify queue: the rescan recovers',
  needsNode: true,
  async run(ctx: ScenarioContext) {
    const site = new Site(ctx.node, 'inotify');
    for (let i = 0; i < STEADY; i++) site.write(`i${i}.yaml`, sleeper(`i${i}`, { grace: 1 }));
    await site.launch();
    const up = await site.converge(120_000);
    if (up.ms === undefined) throw new Error(`the pods did not start: ${JSON.stringify(up.last)}`);
    const agent = site.must();
    const rssBefore = rssBytes(agent.pid) ?? 0;
    const f = ctx.figures;
    let lost = 0;

    // (a) A burst of files in a sub-directory, then changes to the pods at once.
    const junk = path.join(site.manifests, 'junk');
    fs.mkdirSync(junk);
    const t0 = performance.now();
    for (let i = 0; i < BURST_FILES; i++) fs.writeFileSync(path.join(junk, `f${i}.yaml`), sleeper(`junk${i}`));
    const burstMs = performance.now() - t0;
    site.write('a-new.yaml', sleeper('a-new', { grace: 1 }));
    site.write('i1.yaml', sleeper('i1', { grace: 1, edition: 2 }));
    site.remove('i2.yaml');
    const a = await site.converge(120_000);
    if (a.ms === undefined) lost += a.last.lost.length + a.last.orphans.length;
    f.value(`(a) ${BURST_FILES} files written in a sub-directory`, `in ${Math.round(burstMs)} ms`);
    f.time('(a) changes behind the burst → converged', a.ms);
    fs.rmSync(junk, { recursive: true });

    // (b) The agent is stopped (SIGSTOP) while more events than the queue holds happen in the
    // manifest directory itself: the kernel drops the rest, pod changes among them.
    const queue = maxQueuedEvents();
    const events = queue + 4000;
    process.kill(agent.pid, 'SIGSTOP');
    try {
      // Alternating between two names: inotify coalesces only identical consecutive events.
      const names = ['.soak-a.swp', '.soak-b.swp'].map((n) => path.join(site.manifests, n));
      for (let i = 0; i < events; i++) fs.appendFileSync(names[i % 2]!, 'x');
      site.write('b-new.yaml', sleeper('b-new', { grace: 1 }));
      site.write('i3.yaml', sleeper('i3', { grace: 1, edition: 2 }));
      site.remove('i4.yaml');
      for (const n of names) fs.rmSync(n);
    } finally {
      process.kill(agent.pid, 'SIGCONT');
    }
    const b = await site.converge(120_000);
    if (b.ms === undefined) lost += b.last.lost.length + b.last.orphans.length;
    f.value('(b) events while the agent was stopped', `${events + 10} (max_queued_events ${queue})`);
    f.time('(b) agent resumed → converged (the periodic rescan, fileCheckFrequency 20 s)', b.ms);

    const rssAfter = rssBytes(agent.pid) ?? 0;
    const left = await site.clear();
    f.count('lost or orphaned pods after (a) and (b)', lost + left.orphans.length);
    f.count('duplicate sandboxes or containers (seen at any time)', ctx.watch.incidents(site.nodeName).length);
    f.count('agent crashes / BUG lines', site.crashes.length + site.bugLines);
    f.value('agent RSS before → after', `${fmtMiB(rssBefore)} → ${fmtMiB(rssAfter)}`);
  },
};
