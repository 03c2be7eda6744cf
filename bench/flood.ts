// A flood of manifests (issue 20): N tiny pods written at once, measured from outside as an operator
// would see it. Phase one floods FLOOD_PODS manifests and removes them all once every one is
// accepted (far more than could run here): /healthz answer times, RSS, time to accept, the most pods
// mid-start at once, and sandboxes made after the files were gone. Phase two floods FLOOD_RUNNING
// pods and waits for all of them to run. Runs alone: `tsx bench/flood.ts`, or as the bench's section.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { startAgent } from '../test/support/agent.js';
import { countLines, pollHealthzOutside, rssMiBOf, sampleRss, watchCri } from '../test/support/flood-watch.js';
import { freePorts } from '../test/support/ports.js';
import { waitFor } from '../test/support/wait.js';
import { benchPodManifest } from './pods.js';
import { percentile } from './report.js';
import { benchAgentOptions, startBenchNode } from './bench-node.js';

const FLOOD_PODS = Number(process.env.FLOOD_PODS ?? 2000);
const FLOOD_RUNNING = Number(process.env.FLOOD_RUNNING ?? 100);

export interface FloodPhase {
  readonly pods: number;
  readonly healthz: { p50: number; p99: number; max: number; samples: number; failures: number };
  readonly rssBeforeMiB: number;
  readonly rssPeakMiB: number;
  /** Manifests written → the last "accepted" line. */
  readonly allAcceptedMs: number;
  /** Manifests written → every pod's container running (phase two only). */
  readonly allRunningMs?: number;
  readonly maxStarting: number;
  /** Sandboxes that appeared after every file was removed (and seen by the agent's removal lines). */
  readonly sandboxesAfterRemoval?: number;
  /** Files removed → no sandbox of the flood left. */
  readonly cleanupMs: number;
}

export interface FloodResult {
  readonly flood: FloodPhase;
  readonly running: FloodPhase;
}

/** Writes every manifest as careful tooling does (beside it, then renamed), 50 at a time so the writer stays responsive. */
async function writeAll(dir: string, names: string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map(async (n) => {
        const tmp = path.join(dir, `.${n}.yaml.tmp`);
        await fs.writeFile(tmp, benchPodManifest(n));
        await fs.rename(tmp, path.join(dir, `${n}.yaml`));
      }),
    );
  }
}

async function removeAll(dir: string, names: string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 100)
    await Promise.all(names.slice(i, i + 100).map((n) => fs.rm(path.join(dir, `${n}.yaml`))));
}

export async function runFloodBench(
  opts: { pods?: number; running?: number; log?: (s: string) => void } = {},
): Promise<FloodResult> {
  const log = opts.log ?? ((s: string) => console.log(s));
  const node = await startBenchNode('bench-flood');
  const { cd, cri, manifests } = node;
  try {
    const [healthzPort] = await freePorts(1);
    const agent = startAgent(benchAgentOptions(cd.endpoint, node, { healthzPort }));
    try {
      await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'agent ready', 60_000);
      const accepted = countLines(agent.lines, '"msg":"Static pod manifest accepted"');
      const phase = async (prefix: string, count: number, untilRunning: boolean): Promise<FloodPhase> => {
        const names = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
        const acceptedBefore = accepted();
        const rssBeforeMiB = rssMiBOf(agent.proc.pid!);
        // From a process of its own, as the e2e test polls: this one writes the files.
        const poller = await pollHealthzOutside([healthzPort!], 20);
        const rss = sampleRss(agent.proc.pid!, 100);
        const view = watchCri(cri.runtime, prefix, 100);
        const t0 = performance.now();
        await writeAll(manifests, names);
        await waitFor(() => accepted() - acceptedBefore >= count, {
          timeoutMs: 600_000,
          intervalMs: 20,
          what: `${count} manifests accepted`,
        });
        const allAcceptedMs = performance.now() - t0;
        log(`  ${count} accepted after ${allAcceptedMs.toFixed(0)} ms`);
        let allRunningMs: number | undefined;
        if (untilRunning) {
          await waitFor(() => view.running() >= count, { timeoutMs: 600_000, what: `${count} pods running` });
          allRunningMs = performance.now() - t0;
          log(`  ${count} running after ${allRunningMs.toFixed(0)} ms`);
        }
        // Before the removal: a terminating pod (container stopped, sandbox not yet) looks mid-start too.
        await view.fresh();
        const maxStarting = view.maxStarting();
        await removeAll(manifests, names);
        const removedAt = performance.now();
        await waitFor(async () => (await view.fresh(), view.sandboxes() === 0), {
          timeoutMs: 600_000,
          intervalMs: 200,
          what: `every ${prefix} sandbox removed`,
        });
        const cleanupMs = performance.now() - removedAt;
        await view.stop();
        const [healthz] = await poller.stop();
        rss.stop();
        // First seen after the removal: made after the files were gone (at most those in flight then).
        const late = [...view.firstSeen.values()].filter((t) => t > removedAt).length;
        const times = healthz!.times;
        return {
          pods: count,
          healthz: {
            p50: percentile(times, 50),
            p99: percentile(times, 99),
            max: Math.max(...times),
            samples: times.length,
            failures: healthz!.failures.length,
          },
          rssBeforeMiB,
          rssPeakMiB: rss.peak(),
          allAcceptedMs,
          allRunningMs,
          maxStarting,
          sandboxesAfterRemoval: untilRunning ? undefined : late,
          cleanupMs,
        };
      };
      log(`flood: ${opts.pods ?? FLOOD_PODS} manifests, removed once all are accepted`);
      const flood = await phase('flood-', opts.pods ?? FLOOD_PODS, false);
      log(`flood: ${opts.running ?? FLOOD_RUNNING} manifests, until all run`);
      const running = await phase('floodrun-', opts.running ?? FLOOD_RUNNING, true);
      return { flood, running };
    } finally {
      await agent.kill('SIGTERM');
    }
  } finally {
    await node.close();
  }
}

export function printFloodBench(r: FloodResult): void {
  for (const p of [r.flood, r.running]) {
    const h = p.healthz;
    console.log(
      `${p.pods} manifests at once${p.allRunningMs === undefined ? ', removed once all accepted' : ''}: ` +
        `/healthz p50 ${h.p50.toFixed(1)} ms, p99 ${h.p99.toFixed(1)} ms (target < 200), max ${h.max.toFixed(0)} ms over ${h.samples} polls` +
        `${h.failures ? `, ${h.failures} failed` : ''}; RSS ${p.rssBeforeMiB.toFixed(0)} → peak ${p.rssPeakMiB.toFixed(0)} MiB; ` +
        `all accepted ${(p.allAcceptedMs / 1000).toFixed(1)} s` +
        (p.allRunningMs === undefined ? '' : `, all running ${(p.allRunningMs / 1000).toFixed(1)} s`) +
        `; most pods mid-start at once ${p.maxStarting}` +
        (p.sandboxesAfterRemoval === undefined
          ? ''
          : `; sandboxes made after the files were gone ${p.sandboxesAfterRemoval}`) +
        `; removed → all cleaned up ${(p.cleanupMs / 1000).toFixed(1)} s`,
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.dirname ?? '', 'flood.ts')) {
  runFloodBench()
    .then((r) => {
      printFloodBench(r);
      process.exit(0);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
