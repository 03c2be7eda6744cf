// npm run soak [-- --short] [--only=name,...] [--seed=N] [--list]
//
// The reliability suite: the packaged agent (build/bootlet) against a private containerd, driven
// through crashes, runtime restarts, hostile manifests, editors, inotify overflow, a flapping API
// server and a long run, printed as one table. --short is what CI runs (a few minutes); it exits
// non-zero when a count (duplicates, orphans, lost pods, crashes, restarts caused) misses its target.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cleanupStaleContainerds } from '../dev/containerd.js';
import { makeTmpDir, removeTmpDir, TMP_BASE } from '../test/support/tmp.js';
import { BOOTLET_EXE } from '../test/support/agent.js';
import { DuplicateWatch } from './census.js';
import { SoakNode } from './node.js';
import { seededRandom, type Scenario } from './scenario.js';
import { Figures, printTable, type Figure } from './table.js';
import { agentKills } from './scenarios/agent-kills.js';
import { containerdRestarts } from './scenarios/containerd-restarts.js';
import { editors } from './scenarios/editors.js';
import { generatedManifests } from './scenarios/generated.js';
import { inotifyOverflow } from './scenarios/inotify.js';
import { apiServerChaos } from './scenarios/apiserver.js';
import { longRun } from './scenarios/long-run.js';

const SCENARIOS: Scenario[] = [
  agentKills,
  containerdRestarts,
  generatedManifests,
  editors,
  inotifyOverflow,
  apiServerChaos,
  longRun,
];

interface Args {
  short: boolean;
  only: string[] | undefined;
  seed: number;
  list: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { short: false, only: undefined, seed: Date.now() % 2 ** 31, list: false };
  for (const arg of argv) {
    if (arg === '--short') a.short = true;
    else if (arg === '--list') a.list = true;
    else if (arg.startsWith('--only='))
      a.only = arg
        .slice('--only='.length)
        .split(',')
        .map((s) => s.trim().toLowerCase());
    else if (arg.startsWith('--seed=')) a.seed = Number(arg.slice('--seed='.length));
    else
      throw new Error(
        `unknown argument ${arg}; usage: npm run soak -- [--short] [--only=name,...] [--seed=N] [--list]`,
      );
  }
  return a;
}

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, '-');

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    for (const s of SCENARIOS) console.log(`${slug(s.name).padEnd(22)} ${s.about}`);
    return 0;
  }
  const chosen = SCENARIOS.filter((s) => !args.only || args.only.some((o) => slug(s.name).includes(o)));
  if (chosen.length === 0) throw new Error(`--only matches no scenario; see --list`);
  if (!fs.existsSync(BOOTLET_EXE)) throw new Error(`${BOOTLET_EXE} is missing: run npm run build first`);

  const started = performance.now();
  const log = (scenario: string) => (msg: string) =>
    process.stderr.write(
      `soak ${((performance.now() - started) / 1000).toFixed(0).padStart(5)}s ${scenario}: ${msg}\n`,
    );
  log('soak')(
    `${args.short ? 'short' : 'full'} run, seed ${args.seed}, scenarios: ${chosen.map((s) => s.name).join(', ')}`,
  );
  await cleanupStaleContainerds();
  const dir = makeTmpDir('soak');
  // The agents' logs of the last run stay here for a look afterwards.
  const logDir = path.join(TMP_BASE, 'soak-logs');
  fs.rmSync(logDir, { recursive: true, force: true });
  fs.mkdirSync(logDir, { recursive: true });
  const rows: Figure[] = [];
  let node: SoakNode | undefined;
  let watch: DuplicateWatch | undefined;
  try {
    if (chosen.some((s) => s.needsNode)) {
      node = await SoakNode.start(dir, logDir);
      watch = new DuplicateWatch(node.cri.runtime);
      watch.start();
    }
    const runOne = async (
      s: Scenario,
      on: { node?: SoakNode; watch?: DuplicateWatch } = { node, watch },
    ): Promise<Figure[]> => {
      const figures = new Figures(s.name);
      const t0 = performance.now();
      log(s.name)('start');
      try {
        await s.run({
          node: on.node!,
          short: args.short,
          figures,
          watch: on.watch ?? new DuplicateWatch(undefined),
          random: seededRandom(args.seed ^ hash(s.name)),
          log: log(s.name),
        });
      } catch (err) {
        log(s.name)(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        figures.count('scenario errors (did not run to the end)', 1);
      }
      figures.time('scenario duration', performance.now() - t0);
      log(s.name)(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      return figures.rows;
    };
    // In --short, the scenarios of fixed duration run side by side, each but the first on a
    // containerd of its own (one agent per runtime, as one kubelet per node: an agent stops every
    // pod it finds without a manifest).
    const beside = args.short ? chosen.filter((s) => s.besideOthersInShort) : [];
    for (const s of chosen) {
      if (!beside.includes(s)) {
        rows.push(...(await runOne(s)));
        continue;
      }
      if (s !== beside[0]) continue;
      const extra = await Promise.all(beside.slice(1).map(() => SoakNode.start(dir, logDir)));
      const watches = extra.map((n) => new DuplicateWatch(n.cri.runtime));
      watches.forEach((w) => w.start());
      try {
        const results = await Promise.all(
          beside.map((b, i) => (i === 0 ? runOne(b) : runOne(b, { node: extra[i - 1], watch: watches[i - 1] }))),
        );
        for (const r of results) rows.push(...r);
      } finally {
        watches.forEach((w) => w.stop());
        await Promise.all(extra.map((n) => n.stop()));
      }
    }
  } finally {
    watch?.stop();
    await node?.stop();
    try {
      removeTmpDir(dir);
    } catch (err) {
      log('soak')(`left ${dir}: ${(err as Error).message}`);
    }
  }
  log('soak')(`agent logs in ${logDir}`);
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(
    `\nbootlet soak (${args.short ? 'short' : 'full'}), seed ${args.seed}, ${((performance.now() - started) / 60_000).toFixed(1)} min, ${os.cpus().length} CPUs, load average at the end ${load}\n`,
  );
  const failed = printTable(rows);
  console.log(
    failed.length === 0
      ? '\nall gating figures on target'
      : `\n${failed.length} gating figure(s) missed their target: ${failed.map((f) => `${f.scenario}: ${f.what}`).join('; ')}`,
  );
  return failed.length > 0 ? 1 : 0;
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

// Interrupted (Ctrl-C, a CI timeout): exit through process.exit, so that every agent is killed
// (soak/agent-process.ts); the private containerds are removed by the next run or dev/cleanup.ts.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.once(sig, () => process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1)));

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
