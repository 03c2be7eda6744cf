// A flood of manifests through the packaged agent (issue 20): 2,000 tiny pods written at once and
// removed again before most have started. The agent must keep answering /healthz, stay within a
// memory bound, start pods a few at a time, and start nothing whose file is gone.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import type { RunningAgent } from '../../support/agent.js';
import type { HealthzPoll } from '../../support/flood-watch.js';
import {
  countLines,
  cpuMsOf,
  pollHealthzOutside,
  quantileMs,
  sampleRss,
  startControlServer,
  watchCri,
} from '../../support/flood-watch.js';
import { freePorts } from '../../support/ports.js';
import { readOnlyPods } from '../../support/read-only-pods.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-flood';
const PODS = 2000;
/** The agent's DEFAULT_MAX_CONCURRENT_STARTS (src/podworkers/start-slots.ts). */
const START_LIMIT = 16;
/**
 * /healthz polled every 20 ms from a process of its own through the whole flood (the first write to
 * the last sandbox gone, ~500 answers), beside a bare HTTP server polled the same way: the machine's
 * load alone, measured in the same window. On a quiet machine (the bare server's p99 under
 * QUIET_BARE_P99_MS) the agent's p99 must stay under HEALTHZ_P99_MS, issue 20's target. The flood
 * itself loads a 2-core machine (containerd, runc and the shims of the pods it starts): in four runs
 * the bare server's p99 was 35-98 ms and the agent's 105-263, so the agent's p99 may exceed the bare
 * server's by at most LOADED_P99_EXCESS_MS, and its slowest answer the bare server's slowest by
 * LOADED_MAX_EXCESS_MS. Before issue 20 the agent's p99 was 686 ms and its slowest 2.6 s; measured
 * only over the removal (~15 answers), the p99 was the slowest answer and one stall failed the test.
 */
const HEALTHZ_P99_MS = 200;
const QUIET_BARE_P99_MS = 50;
const LOADED_P99_EXCESS_MS = 250;
const LOADED_MAX_EXCESS_MS = 2500;
/** Idle, the agent holds ~85 MiB; before this test it went to 243-401 MiB under this flood, now ~205. */
const RSS_BOUND_MIB = 250;

const h = useAgentHarness('flood', NODE, { extraArgs: ['--v=0'] });
const names = Array.from({ length: PODS }, (_, i) => `flood-${i}`);
let agent: RunningAgent;
let healthzPort: number;
let readOnlyPort: number;
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
  [healthzPort, readOnlyPort, controlPort] = await freePorts(3);
  control = await startControlServer(controlPort);
  agent = h.launch({ healthzPort, readOnlyPort });
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
    const pollers = await pollHealthzOutside([healthzPort, controlPort], 20);
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
      await waitFor(() => accepted() >= PODS, {
        timeoutMs: 60_000,
        intervalMs: 50,
        what: `all ${PODS} manifests accepted`,
      });
      mark('accepted');
      // /pods lists every pod of the desired set, those admission refused with their Failed status
      // (before issue 20 it listed 78 of 2,000); read during the flood, as an operator would. The
      // refused ones are listed as they are refused; an admitted one once its first status is computed.
      const floodPods = async () =>
        (await readOnlyPods(readOnlyPort)).items.filter((p) => p.metadata?.name?.startsWith('flood-'));
      let listed = await floodPods();
      mark('first /pods read');
      const listedAtAccepted = listed.length;
      if (listed.length < PODS)
        await waitFor(async () => (listed = await floodPods()).length >= PODS, {
          timeoutMs: 10_000,
          intervalMs: 50,
          what: `all ${PODS} pods listed by /pods`,
        }).catch(() => undefined);
      mark('pods listed');
      const refusedListed = listed.filter(
        (p) =>
          p.status?.phase === 'Failed' &&
          (p.status.reason ?? '') !== '' &&
          (p.status.message ?? '').startsWith('Pod was rejected: '),
      ).length;
      await cri.fresh();
      const startingAtMost = cri.maxStarting();
      const startedBeforeRemoval = cri.firstSeen.size;

      const removalStart = performance.now();
      const cpuAtRemoval = cpuMsOf(agent.proc.pid!);
      // 50 at a time too: 2,000 removals at once stalled this process, and with it its /healthz poll.
      for (let i = 0; i < PODS; i += 50)
        await Promise.all(names.slice(i, i + 50).map((n) => fs.rm(path.join(h.manifests, `${n}.yaml`))));
      mark('files removed');
      await waitFor(() => removed() >= PODS, {
        timeoutMs: 60_000,
        intervalMs: 50,
        what: `all ${PODS} pods removed from the desired set`,
      }).catch((err: Error) => {
        throw new Error(`${err.message}; ${removed()} were`);
      });
      // From here the agent knows every file is gone: only the starts in flight may still finish.
      const removedAt = performance.now();
      mark('removals seen');
      await waitFor(async () => (await cri.fresh(), cri.sandboxes() === 0), {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: `every flood sandbox removed (left ${cri.sandboxes()})`,
      });
      const cpuAtEnd = cpuMsOf(agent.proc.pid!);
      const [healthz, bare] = (await pollers.stop()) as [HealthzPoll, HealthzPoll];
      rss.stop();

      const madeAfterRemoval = [...cri.firstSeen.values()].filter((t) => t > removedAt).length;
      // The slowest answers and when they were asked (ms from the first write), beside the phases.
      const slow = healthz.times
        .map((ms, i) => ({ ms: Math.round(ms), at: Math.round(healthz.startedAt[i]! - t0) }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5);
      const phase = (p: HealthzPoll, from = 0, to = Infinity) => ({
        p50: quantileMs(p, 0.5, from, to),
        p99: quantileMs(p, 0.99, from, to),
        max: quantileMs(p, 1, from, to),
      });
      const whole = phase(healthz);
      const bareWhole = phase(bare);
      const phases = {
        adding: phase(healthz, 0, removalStart),
        bareAdding: phase(bare, 0, removalStart),
        removal: phase(healthz, removalStart),
        bareRemoval: phase(bare, removalStart),
      };
      const summary = {
        listedAtAccepted,
        listed: listed.length,
        refusedListed,
        marks,
        agentCpuMs: { adding: cpuAtRemoval - cpu0, removal: cpuAtEnd - cpuAtRemoval },
        whole,
        bareWhole,
        ...phases,
        slow,
        polls: healthz.times.length,
        rssPeak: Math.round(rss.peak()),
        startingAtMost,
        startedBeforeRemoval,
        madeAfterRemoval,
      };
      console.log(`flood summary ${JSON.stringify(summary)}`);
      expect(healthz.failures, JSON.stringify(summary)).toEqual([]);
      expect(listed.length, JSON.stringify(summary)).toBe(PODS);
      // Past maxPods (110) every pod is refused, and listed so.
      expect(refusedListed, JSON.stringify(summary)).toBeGreaterThanOrEqual(PODS - 110);
      expect(healthz.times.length, 'answers through the flood').toBeGreaterThan(100);
      if (bareWhole.p99 < QUIET_BARE_P99_MS) expect(whole.p99, JSON.stringify(summary)).toBeLessThan(HEALTHZ_P99_MS);
      else {
        console.warn(
          `flood: machine loaded (bare server p99 ${bareWhole.p99} ms): /healthz p99 ${whole.p99} ms, held to the bare server's + ${LOADED_P99_EXCESS_MS} ms, not to ${HEALTHZ_P99_MS} ms`,
        );
        expect(whole.p99, JSON.stringify(summary)).toBeLessThan(bareWhole.p99 + LOADED_P99_EXCESS_MS);
      }
      expect(whole.max, JSON.stringify(summary)).toBeLessThan(bareWhole.max + LOADED_MAX_EXCESS_MS);
      expect(rss.peak(), JSON.stringify(summary)).toBeLessThan(RSS_BOUND_MIB);
      expect(startingAtMost, JSON.stringify(summary)).toBeLessThanOrEqual(START_LIMIT);
      // Most were removed before their turn came.
      expect(startedBeforeRemoval, JSON.stringify(summary)).toBeLessThan(PODS / 2);
      expect(madeAfterRemoval, JSON.stringify(summary)).toBeLessThanOrEqual(START_LIMIT);
    } finally {
      await pollers.stop();
      rss.stop();
      await cri.stop();
    }
  }, 240_000);
});
