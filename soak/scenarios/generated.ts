// Generated manifests (fast-check): 10,000 valid, invalid and hostile ones through bootlet's parser
// and validator in a process of its own (soak/fuzz/child.ts), counting crashes, the longest hold of
// the event loop and the peak memory; then a few hundred hostile ones through the packaged agent,
// in batches, while its other pods run and its healthz is asked every 250 ms.
import { spawn } from 'node:child_process';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateHostile } from '../fuzz/arbitraries.js';
import type { FuzzMessage, FuzzTotals } from '../fuzz/child.js';
import { Site } from '../node.js';
import { sleeper } from '../pods.js';
import { rssBytes } from '../proc.js';
import type { Scenario, ScenarioContext } from '../scenario.js';
import { fmtMiB } from '../table.js';
import { ContainerState } from '../../src/cri/cri-types.js';
import { listRuntimePods } from '../../src/kuberuntime/runtime-pods.js';

const CHILD = fileURLToPath(new URL('../fuzz/child.ts', import.meta.url));
const BATCH = 20;
const VERDICT_TIMEOUT_MS = 60_000;

interface ChildRun {
  totals?: FuzzTotals;
  crashes: { index: number; shape: string; error: string }[];
  /** The last manifest it started on (where an abort happened). */
  last: { index: number; shape: string };
  exit: { code: number | null; signal: NodeJS.Signals | null };
  stderrTail: string[];
}

/** One run of the child from `start`; resolves when it exits, however. */
function runChild(seed: number, count: number, start: number): Promise<ChildRun> {
  return new Promise((resolve) => {
    // The agent's V8 setting (src/v8-flags.ts): what is measured is what the agent would pay.
    const child = spawn(
      process.execPath,
      ['--max-opt=1', '--import', 'tsx', CHILD, String(seed), String(count), String(start)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const run: ChildRun = {
      crashes: [],
      last: { index: start, shape: '' },
      exit: { code: null, signal: null },
      stderrTail: [],
    };
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      let m: FuzzMessage;
      try {
        m = JSON.parse(line) as FuzzMessage;
      } catch {
        return;
      }
      if (m.type === 'at') run.last = { index: m.index, shape: m.shape };
      else if (m.type === 'crash') run.crashes.push(m);
      else run.totals = m.totals;
    });
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      run.stderrTail.push(line);
      if (run.stderrTail.length > 20) run.stderrTail.shift();
    });
    child.on('exit', (code, signal) => {
      run.exit = { code, signal };
      resolve(run);
    });
  });
}

async function inProcess(ctx: ScenarioContext, seed: number, count: number): Promise<void> {
  const f = ctx.figures;
  const t0 = performance.now();
  let start = 0;
  let crashes = 0;
  const runs: FuzzTotals[] = [];
  while (start < count) {
    const r = await runChild(seed, count, start);
    for (const c of r.crashes) ctx.log(`crash at #${c.index} (${c.shape}): ${c.error.split('\n')[0]}`);
    crashes += r.crashes.length;
    if (r.totals) {
      runs.push(r.totals);
      break;
    }
    // The process died (a V8 abort, out of memory): a crash of the manifest it was on.
    crashes++;
    ctx.log(
      `the parser process died at #${r.last.index} (${r.last.shape}): code ${r.exit.code} signal ${r.exit.signal}: ${r.stderrTail.slice(-3).join(' | ')}`,
    );
    start = r.last.index + 1;
  }
  const t = runs.at(-1);
  if (t) {
    const slow = Object.entries(t.msByShape)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)} s`);
    ctx.log(
      `${count} manifests in ${((performance.now() - t0) / 1000).toFixed(0)} s; the costliest kinds in all: ${slow.join(', ')}`,
    );
  }
  const classes = t
    ? (['valid', 'invalid', 'hostile'] as const)
        .map((c) => `${c} ${t.byClass[c].total} (${t.byClass[c].accepted} accepted)`)
        .join(', ')
    : 'n/a';
  f.value(`generated manifests (seed ${seed})`, classes);
  f.count('crashes (an exception out of the loader, or the process dying)', crashes);
  if (t) {
    f.value(
      `event loop held by loading one manifest on it: p99 · max (${t.longestBlockShape})`,
      `${t.p99BlockMs.toFixed(1)} ms · ${t.longestBlockMs.toFixed(0)} ms`,
      '≤ 50 ms',
      t.longestBlockMs <= 50,
    );
    f.value(
      `event loop late while a costly one was in the worker: p99 · max (${t.longestLatenessShape})`,
      `${t.p99LatenessMs.toFixed(1)} ms · ${t.longestLatenessMs.toFixed(0)} ms`,
      '≤ 50 ms',
      t.longestLatenessMs <= 50,
    );
    f.value('loaded in the worker thread (over 32 KiB or 2,000 structure bytes)', String(t.offThread));
    f.value(
      'peak RSS of the parsing process (start)',
      `${fmtMiB(t.peakRssBytes)} (${fmtMiB(t.startRssBytes)})`,
      '',
      undefined,
    );
  }
}

async function throughAgent(ctx: ScenarioContext, seed: number, count: number): Promise<void> {
  const f = ctx.figures;
  const site = new Site(ctx.node, 'generated');
  for (let i = 0; i < 3; i++) site.write(`steady${i}.yaml`, sleeper(`steady${i}`, { grace: 1 }));
  await site.launch();
  const up = await site.converge(120_000);
  if (up.ms === undefined) throw new Error(`the steady pods did not start: ${JSON.stringify(up.last)}`);
  const containers = async () =>
    [...(await listRuntimePods(site.runtime)).values()]
      .filter((p) => p.name.startsWith('steady'))
      .flatMap((p) => p.containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => c.id))
      .sort()
      .join(',');
  const before = await containers();
  const agent = site.must();

  let asked = 0;
  let unanswered = 0;
  let peakRss = 0;
  let probing = true;
  const prober = (async () => {
    while (probing) {
      asked++;
      if (!(await site.healthz(5000))) unanswered++;
      peakRss = Math.max(peakRss, rssBytes(agent.pid) ?? 0);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();

  const all = generateHostile(seed, count);
  const verdicts = { accepted: 0, refused: 0, none: 0 };
  const refusedLimit = { n: 0 };
  try {
    for (let b = 0; b < all.length; b += BATCH) {
      const batch = all.slice(b, b + BATCH).map((g, j) => ({ g, file: `gen-${b + j}.yaml` }));
      const since = agent.mark;
      for (const { g, file } of batch) site.write(file, g.make());
      for (const { file, g } of batch) {
        const path = site.file(file);
        try {
          const r = await agent.waitFor(
            (x) =>
              x.file === path && (x.msg === 'Static pod manifest accepted' || x.msg === 'Static pod manifest refused'),
            `a verdict on ${file}`,
            VERDICT_TIMEOUT_MS,
            since,
          );
          if (r.msg === 'Static pod manifest accepted') verdicts.accepted++;
          else {
            verdicts.refused++;
            if (/the limit for a manifest|larger than|parsing (took|needed)/.test(String(r.err))) refusedLimit.n++;
          }
        } catch {
          verdicts.none++;
          ctx.log(`no verdict on ${file} (${g.shape})`);
        }
      }
      for (const { file } of batch) site.remove(file);
      if (!agent.alive) throw new Error('the agent died');
    }
  } finally {
    probing = false;
    await prober;
  }
  // The hostile pods that were accepted are gone again, and the steady ones never moved.
  const settled = await site.converge(120_000);
  const after = await containers();
  const left = await site.clear();
  f.value(
    `hostile manifests through the agent, in batches of ${BATCH}`,
    `${all.length}: ${verdicts.refused} refused (${refusedLimit.n} by a limit), ${verdicts.accepted} accepted`,
  );
  f.count(`files with no verdict within ${VERDICT_TIMEOUT_MS / 1000} s`, verdicts.none);
  f.count('agent crashes / BUG lines', site.crashes.length + site.bugLines);
  f.count(`healthz not answered within 5 s (of ${asked} asked)`, unanswered);
  f.count('steady pods disturbed (containers changed)', before === after ? 0 : 1);
  f.count('duplicate sandboxes or containers (seen at any time)', ctx.watch.incidents(site.nodeName).length);
  f.count(
    'pods left after their manifests went',
    (settled.ms === undefined ? settled.last.orphans.length : 0) + left.orphans.length,
  );
  f.value('agent peak RSS meanwhile', fmtMiB(peakRss));
}

export const generatedManifests: Scenario = {
  name: 'generated manifests',
  about: '10,000 generated manifests (valid, invalid, hostile) in process, a few hundred hostile through the agent',
  needsNode: true,
  async run(ctx: ScenarioContext) {
    const seed = Math.floor(ctx.random() * 2 ** 31);
    await inProcess(ctx, seed, ctx.short ? 300 : 10_000);
    await throughAgent(ctx, seed, ctx.short ? 40 : 300);
  },
};
