// Every way a manifest gets saved, through the packaged agent: each save with new content must
// replace the pod exactly once (never a pod from a half-written file, a backup or a temp file), and
// a save with the same content must change nothing at all.
import * as fs from 'node:fs';
import { loadManifest } from '../../src/config/manifest.js';
import { realVim, SAVE_PATTERNS, type SavePattern } from '../editors.js';
import { Site } from '../node.js';
import { sleeper } from '../pods.js';
import { sleep, type Scenario, type ScenarioContext } from '../scenario.js';

/** How long nothing must happen after a save has been handled (or after a same-content save). */
const QUIET_MS = 1500;

export const editors: Scenario = {
  name: 'editor saves',
  about: 'vim, emacs, nano, sed -i, rename-over, cp and a paused partial write: 0 spurious or lost pods',
  needsNode: true,
  async run(ctx: ScenarioContext) {
    const rounds = ctx.short ? 4 : 20;
    const site = new Site(ctx.node, 'editors');
    const vim = await realVim();
    const patterns: SavePattern[] = [...SAVE_PATTERNS, ...(vim ? [vim] : [])];
    const files = patterns.map((_, i) => site.file(`ed${i}.yaml`));
    const content = (i: number, edition: number) => sleeper(`ed${i}`, { edition, grace: 1, containers: 2 });
    patterns.forEach((_, i) => fs.writeFileSync(files[i]!, content(i, 1)));
    await site.launch();
    const up = await site.converge(120_000);
    if (up.ms === undefined) throw new Error(`the editor pods did not start: ${JSON.stringify(up.last)}`);

    const uidOf = (file: string, text: string): string => {
      const r = loadManifest(file, text, site.nodeName, new Date());
      if ('error' in r) throw new Error(`${file}: ${r.error.message}`);
      return r.pod.uid;
    };
    const perPattern = patterns.map(() => ({ spurious: 0, lost: 0, saves: 0, ms: [] as number[] }));
    for (let round = 0; round < rounds; round++) {
      // Odd rounds save the same content again: nothing may happen. Every pattern saves its own
      // file at the same moment, as an operator editing several manifests might.
      const edition = Math.floor(round / 2) + 2;
      const since = site.must().mark;
      const t0 = performance.now();
      const steps = patterns.map((p, i) => {
        const file = files[i]!;
        const text = content(i, edition);
        return {
          p,
          i,
          file,
          text,
          same: fs.readFileSync(file, 'utf8') === text,
          uid: uidOf(file, text),
          key: `default/ed${i}-${site.nodeName}`,
        };
      });
      const saved = await Promise.all(
        steps.map(async (st) => {
          await st.p.save(st.file, st.text);
          return performance.now();
        }),
      );
      for (const st of steps) {
        perPattern[st.i]!.saves++;
        if (fs.readFileSync(st.file, 'utf8') !== st.text)
          throw new Error(`${st.p.name}: the file does not hold what was saved`);
      }
      const c = await site.converge(60_000);
      if (c.ms === undefined) ctx.log(`round ${round}: not converged: ${JSON.stringify(c.last)}`);
      const convergedAt = performance.now();
      await sleep(QUIET_MS);
      for (const st of steps) {
        const stats = perPattern[st.i]!;
        if (c.ms === undefined && c.last.lost.includes(st.key)) stats.lost++;
        // When this pod's new sandbox came, from the agent's log (the census is for all of them).
        const mine = (r: Record<string, unknown>) => r.pod === st.key;
        const sandboxes = site.must().find((r) => mine(r) && r.msg === 'Created pod sandbox', since);
        const kills = site.must().find((r) => mine(r) && r.msg === 'Killing container' && r.podUID === st.uid, since);
        if (!st.same) {
          const started = site
            .must()
            .find((r) => mine(r) && r.msg === 'Started container' && r.podUID === st.uid, since)
            .at(-1);
          stats.ms.push(
            started ? Number(started.ts) * 1000 - (performance.timeOrigin + saved[st.i]!) : convergedAt - t0,
          );
        }
        // A new edition: exactly one sandbox, of the final content's UID. The same content: none.
        const wrong =
          sandboxes.filter((r) => r.podUID !== st.uid).length +
          Math.max(0, sandboxes.filter((r) => r.podUID === st.uid).length - (st.same ? 0 : 1));
        if (wrong + kills.length > 0)
          ctx.log(
            `${st.p.name}: spurious: ${JSON.stringify([...sandboxes, ...kills].map((r) => `${r.msg} ${String(r.podUID).slice(0, 8)}`))}`,
          );
        stats.spurious += wrong + kills.length;
      }
      ctx.log(`round ${round + 1}/${rounds} done`);
    }
    const left = await site.clear();
    const f = ctx.figures;
    f.value('saves (half with new content, half the same again)', String(perPattern.reduce((n, s) => n + s.saves, 0)));
    for (const [i, p] of patterns.entries()) {
      const s = perPattern[i]!;
      f.count(`${p.name}: spurious or lost pods`, s.spurious + s.lost);
    }
    f.times(
      'save → new pod running (all patterns)',
      perPattern.flatMap((s) => s.ms),
    );
    f.count('pods left after their manifests went', left.orphans.length);
    f.count('duplicate sandboxes or containers (seen at any time)', ctx.watch.incidents(site.nodeName).length);
    f.count('agent crashes / BUG lines', site.crashes.length + site.bugLines);
  },
};
