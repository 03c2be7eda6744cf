// A flood of manifests through the packaged agent (issue 20): 2,000 tiny pods written at once and
// removed again before most have started. The agent must keep answering /healthz, stay within a
// memory bound, start pods a few at a time, and start nothing whose file is gone.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import type { RunningAgent } from '../../support/agent.js';
import { countLines, cpuMsOf, pollHealthz, quantileMs, sampleRss, startControlServer, watchCri } from '../../support/flood-watch.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-flood';
const PODS = 2000;
/** The agent's DEFAULT_MAX_CONCURRENT_STARTS (src/podworkers/pod-workers.ts). */
const START_LIMIT = 8;
/**
 * /healthz polled every 50 ms from outside while 2,000 pods are removed at once, beside a bare HTTP
 * server polled the same way (the machine's load and this process's own pauses, measured in the
 * same window). On a quiet machine (the bare server's p99 under QUIET_BARE_P99_MS) the agent's p99
 * must stay under HEALTHZ_P99_MS, issue 20's target. On a machine loaded by others a CPU-bound agent
 * is descheduled for far longer than an idle server, so only the slowest answer's excess over the
 * bare server's slowest is asserted then, and the p99 is printed. Measured back to back on a shared
 * 2-core machine at load 17-44 (agent CPU in the removal / removal p99 / slowest answer of the flood):
 * before this test's fixes 3.6-4.7 s / 924-4069 ms / up to 5.5 s, after 1.5-3.2 s / 722-1781 ms / up
 * to 1.8 s. No quiet moment came in that session to measure the 200 ms target itself.
 */
const HEALTHZ_P99_MS = 200;
const QUIET_BARE_P99_MS = 50;
const LOADED_MAX_EXCESS_MS = 2500;
/** Idle, the agent holds ~85 MiB; before this test it went to 243-401 MiB under this flood, now ~205. */
const RSS_BOUND_MIB = 250;

const h = useAgentHarness('flood', NODE, { extraArgs: ['--v=0'] });
const names = Array.from({ length: PODS }, (_, i) => `flood-${i}`);
let agent: RunningAgent;
let healthzPort: number;
let controlPort: number;
let control: { stop(): Promise<void> } | undefined;

const manifest = (name: string): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;

beforeAll(async () => {
  [healthzPort, controlPort] = await freePorts(2);
  control = await startControlServer(controlPort);
  agent = h.launch({ healthzPort });
  await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'agent ready', 60_000);
});

afterAll(async () => {
  await control?.stop();
  // Whatever happened, no manifest stays behind to keep pods running on the shared containerd.
  await Promise.all(names.map((n) => fs.rm(path.join(h.manifests, `${n}.yaml`), { force: true })));
});

describe('a flood of manifests', () => {
  it('keeps /healthz answering, memory bounded and starts bounded, and starts nothing whose file is gone', async () => {
    const accepted = countLines(agent.lines, '"msg":"Static pod manifest accepted"');
    const removed = countLines(agent.lines, '"msg":"Static pod removed from desired set"');
    const healthz = pollHealthz(healthzPort, 50);
    const bare = pollHealthz(controlPort, 50);
    const rss = sampleRss(agent.proc.pid!, 100);
    const cri = watchCri(h.cri().runtime, 'flood-', 100);
    const t0 = performance.now();
    const cpu0 = cpuMsOf(agent.proc.pid!);
    const marks: Record<string, number> = {};
    const mark = (what: string): void => void (marks[what] = Math.round(performance.now() - t0));
    try {
      // As careful tooling writes (beside the name, then renamed), 50 at a time.
      for (let i = 0; i < PODS; i += 50) {
        await Promise.all(
          names.slice(i, i + 50).map(async (n) => {
            const tmp = path.join(h.manifests, `.${n}.yaml.tmp`);
            await fs.writeFile(tmp, manifest(n));
            await fs.rename(tmp, path.join(h.manifests, `${n}.yaml`));
          }),
        );
      }
      await waitFor(() => accepted() >= PODS, { timeoutMs: 60_000, intervalMs: 50, what: `all ${PODS} manifests accepted` });
      mark('accepted');
      await cri.fresh();
      const startingAtMost = cri.maxStarting();
      const startedBeforeRemoval = cri.firstSeen.size;

      const removalStart = performance.now();
      const cpuAtRemoval = cpuMsOf(agent.proc.pid!);
      // 50 at a time too: 2,000 removals at once stalled this process, and with it its /healthz poll.
      for (let i = 0; i < PODS; i += 50) await Promise.all(names.slice(i, i + 50).map((n) => fs.rm(path.join(h.manifests, `${n}.yaml`))));
      mark('files removed');
      await waitFor(() => removed() >= PODS, { timeoutMs: 60_000, intervalMs: 50, what: `all ${PODS} pods removed from the desired set` }).catch((err: Error) => {
        throw new Error(`${err.message}; ${removed()} were`);
      });
      // From here the agent knows every file is gone: only the starts in flight may still finish.
      const removedAt = performance.now();
      mark('removals seen');
      await waitFor(async () => (await cri.fresh(), cri.sandboxes() === 0), { timeoutMs: 60_000, intervalMs: 200, what: `every flood sandbox removed (left ${cri.sandboxes()})` });
      const cpuAtEnd = cpuMsOf(agent.proc.pid!);
      await Promise.all([healthz.stop(), bare.stop()]);
      rss.stop();

      const slowest = Math.max(...healthz.times);
      const madeAfterRemoval = [...cri.firstSeen.values()].filter((t) => t > removedAt).length;
      // The slowest answers and when they were asked (ms from the first write), beside the phases.
      const slow = healthz.times
        .map((ms, i) => ({ ms: Math.round(ms), at: Math.round(healthz.startedAt[i]! - t0) }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5);
      const removal = { p50: quantileMs(healthz, 0.5, removalStart), p99: quantileMs(healthz, 0.99, removalStart), max: quantileMs(healthz, 1, removalStart) };
      const bareRemoval = { p50: quantileMs(bare, 0.5, removalStart), p99: quantileMs(bare, 0.99, removalStart), max: quantileMs(bare, 1, removalStart) };
      const adding = { p99: quantileMs(healthz, 0.99, 0, removalStart), bareP99: quantileMs(bare, 0.99, 0, removalStart) };
      const summary = { marks, agentCpuMs: { adding: cpuAtRemoval - cpu0, removal: cpuAtEnd - cpuAtRemoval }, removal, bareRemoval, adding, slow, slowest: Math.round(slowest), bareSlowest: Math.round(Math.max(...bare.times)), polls: healthz.times.length, rssPeak: Math.round(rss.peak()), startingAtMost, startedBeforeRemoval, madeAfterRemoval };
      console.log(`flood summary ${JSON.stringify(summary)}`);
      expect(healthz.failures, JSON.stringify(summary)).toEqual([]);
      if (bareRemoval.p99 < QUIET_BARE_P99_MS) expect(removal.p99, JSON.stringify(summary)).toBeLessThan(HEALTHZ_P99_MS);
      else console.warn(`flood: machine loaded (bare server p99 ${bareRemoval.p99} ms): /healthz p99 ${removal.p99} ms during the removal, not held to ${HEALTHZ_P99_MS} ms`);
      expect(slowest, JSON.stringify(summary)).toBeLessThan(Math.max(...bare.times) + LOADED_MAX_EXCESS_MS);
      expect(rss.peak(), JSON.stringify(summary)).toBeLessThan(RSS_BOUND_MIB);
      expect(startingAtMost, JSON.stringify(summary)).toBeLessThanOrEqual(START_LIMIT);
      // Most were removed before their turn came.
      expect(startedBeforeRemoval, JSON.stringify(summary)).toBeLessThan(PODS / 2);
      expect(madeAfterRemoval, JSON.stringify(summary)).toBeLessThanOrEqual(START_LIMIT);
    } finally {
      await Promise.all([healthz.stop(), bare.stop()]);
      rss.stop();
      await cri.stop();
    }
  }, 240_000);
});
