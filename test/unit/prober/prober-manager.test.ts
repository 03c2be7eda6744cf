// The manager and its workers with fake handlers and fake timers: thresholds, initial delay,
// startup gating, readiness, restarts, jitter, no overlap, events and log lines.
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { memoryLogger } from '../../../src/log/logger.js';
import { ProberManager } from '../../../src/prober/prober-manager.js';
import type { ProbeHandlers } from '../../../src/prober/run-probe.js';
import { ReportedStatuses } from '../../../src/status/reported-statuses.js';
import type { ProbeFailureEvent, ProbeOutcome, ProbeResultEvent } from '../../../src/prober/types.js';

const UID = 'uid-1';

/** exec probes answer by the first word of their command, from a script the test changes. */
class Script {
  answers = new Map<string, ProbeOutcome | (() => Promise<ProbeOutcome>)>();
  calls: { cmd: string; at: number; containerId: string }[] = [];
  inFlight = 0;
  maxInFlight = 0;
  handlers: ProbeHandlers = {
    exec: async (containerId, command) => {
      const cmd = command[0]!;
      this.calls.push({ cmd, at: Date.now(), containerId });
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      try {
        const a = this.answers.get(cmd) ?? { result: 'success', output: '' };
        return typeof a === 'function' ? await a() : a;
      } finally {
        this.inFlight--;
      }
    },
    http: async () => ({ result: 'success', output: '' }),
    tcp: async () => ({ result: 'success', output: '' }),
    grpc: async () => ({ result: 'success', output: '' }),
  };
  set(cmd: string, result: ProbeOutcome['result'], output: string = result): void {
    this.answers.set(cmd, { result, output });
  }
  count(cmd: string): number {
    return this.calls.filter((c) => c.cmd === cmd).length;
  }
}

function pod(container: Partial<Container>, restartPolicy: 'Always' | 'Never' = 'Always'): Pod {
  return {
    metadata: { name: 'p-node1', namespace: 'kube-system', uid: UID },
    spec: { restartPolicy, containers: [{ name: 'app', image: 'x', ...container }] },
  };
}

let script: Script;
let mgr: ProberManager;
let results: ProbeResultEvent[];
let failures: ProbeFailureEvent[];
let lines: string[];

/** A manager started long ago, so no start-up jitter unless a test wants it. */
function newManager(random = () => 0, now?: () => number, reported?: ReportedStatuses): void {
  const mem = memoryLogger(0);
  lines = mem.lines;
  mgr = new ProberManager({
    runtime: { execSync: () => Promise.reject(new Error('unused')) },
    handlers: script.handlers,
    logger: mem.logger,
    random,
    now,
    reported,
  });
  results = [];
  failures = [];
  mgr.onResult((e) => results.push(e));
  mgr.onFailure((e) => failures.push(e));
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  script = new Script();
});

afterEach(() => {
  mgr?.stop();
  vi.useRealTimers();
});

async function startedLongAgo(): Promise<void> {
  // Past the agent's first period, so workers do not jitter.
  await vi.advanceTimersByTimeAsync(60_000);
}

describe('liveness', () => {
  it('reports a failure only after failureThreshold consecutive failures, then holds until a new container', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(
      pod({ livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1, failureThreshold: 3 } }),
      '10.0.0.1',
    );
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(10);
    expect(script.count('live')).toBe(1);
    expect(results.at(-1)).toMatchObject({
      probeType: 'liveness',
      result: 'success',
      changed: false,
      containerId: 'c1',
    });

    script.set('live', 'failure', 'no pulse');
    await vi.advanceTimersByTimeAsync(2000);
    expect(failures).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(failures).toEqual([
      {
        type: 'livenessFailed',
        podUid: UID,
        containerName: 'app',
        containerId: 'c1',
        message: 'Container app failed liveness probe, will be restarted',
        reason: 'LivenessProbe',
        output: 'no pulse',
        terminationGracePeriodSeconds: undefined,
      },
    ]);
    expect(results.at(-1)).toMatchObject({ probeType: 'liveness', result: 'failure', changed: true });
    expect(mgr.failedProbe(UID, 'app', 'c1')).toBe('liveness');
    expect(mgr.failedProbe(UID, 'app', 'other')).toBeUndefined();
    const probes = script.count('live');
    // On hold: a dying container is not probed again.
    await vi.advanceTimersByTimeAsync(5000);
    expect(script.count('live')).toBe(probes);
    expect(failures).toHaveLength(1);

    // The restarted container starts over: probed again, counted from scratch.
    mgr.containerStarted(UID, 'app', 'c2', Date.now());
    await vi.advanceTimersByTimeAsync(1500);
    expect(script.calls.at(-1)!.containerId).toBe('c2');
    expect(failures).toHaveLength(1);
    expect(mgr.failedProbe(UID, 'app', 'c2')).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1000);
    expect(failures.map((f) => f.containerId)).toEqual(['c1', 'c2']);
  });

  it('says "will be restarted" only when the pod restarts containers', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(
      pod({ livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1, failureThreshold: 1 } }, 'Never'),
      '',
    );
    script.set('live', 'failure', 'x');
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(10);
    expect(failures[0]!.message).toBe('Container app failed liveness probe');
  });

  it("says so by the container's own restartPolicy before the pod's (ContainerRestartRules)", async () => {
    newManager();
    await startedLongAgo();
    const live = { exec: { command: ['live'] }, periodSeconds: 1, failureThreshold: 1 };
    mgr.addPod(pod({ livenessProbe: live, restartPolicy: 'Always' }, 'Never'), '');
    script.set('live', 'failure', 'x');
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(10);
    expect(failures[0]!.message).toBe('Container app failed liveness probe, will be restarted');
  });

  it('a success in between resets the failure count', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(pod({ livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1, failureThreshold: 2 } }), '');
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(10);
    for (const r of ['failure', 'success', 'failure', 'success', 'failure'] as const) {
      script.set('live', r);
      await vi.advanceTimersByTimeAsync(1000);
    }
    expect(failures).toEqual([]);
  });

  it('throws away results it could not get (unknown): they count neither way', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(pod({ livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1, failureThreshold: 2 } }), '');
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    script.set('live', 'failure');
    await vi.advanceTimersByTimeAsync(10);
    script.set('live', 'unknown', 'runtime hiccup');
    await vi.advanceTimersByTimeAsync(3000);
    expect(failures).toEqual([]);
    expect(lines.some((l) => JSON.parse(l).msg === 'Probe errored')).toBe(true);
    script.set('live', 'failure');
    await vi.advanceTimersByTimeAsync(1000);
    expect(failures).toHaveLength(1);
  });
});

describe('initialDelaySeconds', () => {
  it('no probe before the delay, counted from the container start', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(pod({ livenessProbe: { exec: { command: ['live'] }, periodSeconds: 2, initialDelaySeconds: 5 } }), '');
    const startedAt = Date.now() - 2000;
    mgr.containerStarted(UID, 'app', 'c1', startedAt);
    await vi.advanceTimersByTimeAsync(2999);
    expect(script.count('live')).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(script.calls.map((c) => c.at - startedAt)).toEqual([5000]);
    await vi.advanceTimersByTimeAsync(4000);
    expect(script.calls.map((c) => c.at - startedAt)).toEqual([5000, 7000, 9000]);
  });
});

describe('startup gating', () => {
  const probes = {
    startupProbe: { exec: { command: ['start'] }, periodSeconds: 1, failureThreshold: 30 },
    livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1 },
    readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 10 },
  };

  it('liveness and readiness wait for the startup probe, which then stops; readiness runs at once', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(pod(probes), '');
    script.set('start', 'failure');
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(3500);
    expect(script.count('start')).toBe(4);
    expect(script.count('live') + script.count('ready')).toBe(0);
    expect(mgr.started(UID, 'app')).toBe(false);
    expect(mgr.readiness(UID, 'app')).toBe(false);

    script.set('start', 'success');
    await vi.advanceTimersByTimeAsync(600);
    expect(mgr.started(UID, 'app')).toBe(true);
    // Readiness did not wait for its 10 s period.
    expect(script.count('ready')).toBe(1);
    expect(mgr.readiness(UID, 'app')).toBe(true);
    const starts = script.count('start');
    await vi.advanceTimersByTimeAsync(5000);
    expect(script.count('start')).toBe(starts);
    expect(script.count('live')).toBeGreaterThanOrEqual(4);
  });

  it('a startup failure at the threshold is reported for a restart', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(
      pod({ ...probes, startupProbe: { exec: { command: ['start'] }, periodSeconds: 1, failureThreshold: 2 } }),
      '',
    );
    script.set('start', 'failure', 'not yet');
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(1500);
    expect(failures).toMatchObject([
      {
        type: 'startupFailed',
        reason: 'StartupProbe',
        message: 'Container app failed startup probe, will be restarted',
        output: 'not yet',
      },
    ]);
    expect(script.count('live')).toBe(0);
  });
});

describe('readiness', () => {
  it('false until the first success, then follows the thresholds', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(
      pod({
        readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 1, successThreshold: 2, failureThreshold: 1 },
      }),
      '',
    );
    expect(mgr.readiness(UID, 'app')).toBe(false);
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(10);
    expect(mgr.readiness(UID, 'app')).toBe(false);
    await vi.advanceTimersByTimeAsync(1000);
    expect(mgr.readiness(UID, 'app')).toBe(true);
    expect(results.filter((r) => r.changed)).toMatchObject([{ probeType: 'readiness', result: 'success' }]);
    script.set('ready', 'failure', 'busy');
    await vi.advanceTimersByTimeAsync(1000);
    expect(mgr.readiness(UID, 'app')).toBe(false);
    // A stopped container is not ready; a new one starts from not ready.
    script.set('ready', 'success');
    await vi.advanceTimersByTimeAsync(2000);
    expect(mgr.readiness(UID, 'app')).toBe(true);
    mgr.containerStopped(UID, 'app');
    expect(mgr.readiness(UID, 'app')).toBe(false);
    mgr.containerStarted(UID, 'app', 'c2', Date.now());
    expect(mgr.readiness(UID, 'app')).toBe(false);
  });

  it('a container without probes is started and ready while it runs; unknown pods are undefined', () => {
    newManager();
    mgr.addPod(pod({}), '');
    expect(mgr.readiness(UID, 'app')).toBe(false);
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    expect(mgr.started(UID, 'app')).toBe(true);
    expect(mgr.readiness(UID, 'app')).toBe(true);
    expect(mgr.readiness('other', 'app')).toBeUndefined();
    expect(mgr.started(UID, 'other')).toBeUndefined();
    mgr.removePod(UID);
    expect(mgr.readiness(UID, 'app')).toBeUndefined();
  });
});

describe('scheduling', () => {
  it('spreads the first probe over the period when the agent just started, never before the initial delay', async () => {
    newManager(() => 0.5);
    mgr.addPod(pod({ livenessProbe: { exec: { command: ['live'] }, periodSeconds: 10 } }), '');
    const t0 = Date.now();
    mgr.containerStarted(UID, 'app', 'c1', t0 - 60_000);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(script.calls.map((c) => c.at - t0)).toEqual([5000, 15000]);

    mgr.removePod(UID);
    script.calls = [];
    newManager(() => 0.5);
    mgr.addPod(pod({ livenessProbe: { exec: { command: ['live'] }, periodSeconds: 10, initialDelaySeconds: 8 } }), '');
    const t1 = Date.now();
    mgr.containerStarted(UID, 'app', 'c1', t1);
    await vi.advanceTimersByTimeAsync(8500);
    expect(script.calls.map((c) => c.at - t1)).toEqual([8000]);
  });

  it('never runs a probe twice at once; a slow probe skips ticks and delays no other worker', async () => {
    newManager();
    await startedLongAgo();
    script.answers.set('slow', () => new Promise((r) => setTimeout(() => r({ result: 'success', output: '' }), 2500)));
    mgr.addPod(
      {
        metadata: { name: 'p', namespace: 'default', uid: UID },
        spec: {
          containers: [
            { name: 'slow', livenessProbe: { exec: { command: ['slow'] }, periodSeconds: 1, timeoutSeconds: 3 } },
            { name: 'fast', livenessProbe: { exec: { command: ['fast'] }, periodSeconds: 1 } },
          ],
        },
      },
      '',
    );
    const t0 = Date.now();
    mgr.containerStarted(UID, 'slow', 's1', t0);
    mgr.containerStarted(UID, 'fast', 'f1', t0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(script.maxInFlight).toBeLessThanOrEqual(2);
    const slow = script.calls.filter((c) => c.cmd === 'slow').map((c) => c.at - t0);
    expect(slow).toEqual([0, 3000, 6000, 9000]);
    const fast = script.calls.filter((c) => c.cmd === 'fast').map((c) => c.at - t0);
    expect(fast).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000]);
  });

  it('measures drift of scheduled ticks: how late a timer fired, on the next tick back on the grid', async () => {
    // The manager's clock runs `late` ms ahead of the timers: as if the event loop had held a tick back.
    let late = 0;
    newManager(
      () => 0,
      () => Date.now() + late,
    );
    await startedLongAgo();
    mgr.addPod(pod({ livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1 } }), '');
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(2500);
    expect(mgr.drift()).toMatchObject({ count: 3, maxMs: 0 });
    late = 300;
    await vi.advanceTimersByTimeAsync(2500);
    // The tick due at 3000 fired at 3300 by the manager's clock; the next ones are on the grid again.
    expect(mgr.drift()).toEqual({ count: 6, p50Ms: 0, p95Ms: 300, maxMs: 300 });
  });
});

describe('log lines', () => {
  it('one line per change, in the kubelet event wording', async () => {
    newManager();
    await startedLongAgo();
    mgr.addPod(
      pod({
        livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1, failureThreshold: 1 },
        readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 1 },
      }),
      '',
    );
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(3000);
    script.set('live', 'failure', 'HTTP probe failed with statuscode: 500');
    await vi.advanceTimersByTimeAsync(1000);
    const recs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(recs.filter((r) => r.msg === 'Probe succeeded')).toHaveLength(1);
    expect(recs.filter((r) => r.msg === 'Probe failed')).toEqual([
      expect.objectContaining({
        pod: 'kube-system/p-node1',
        podUID: UID,
        containerName: 'app',
        probeType: 'Liveness',
        output: 'HTTP probe failed with statuscode: 500',
        message: 'Liveness probe failed: HTTP probe failed with statuscode: 500',
        severity: 'warning',
      }),
    ]);
  });
});

describe('probe runs (prober_probe_total)', () => {
  it('reports every probe that gave a result, below thresholds too, but not one that errored', async () => {
    const mem = memoryLogger(0);
    const runs: string[] = [];
    mgr = new ProberManager({
      runtime: { execSync: () => Promise.reject(new Error('unused')) },
      handlers: script.handlers,
      logger: mem.logger,
      random: () => 0,
      onProbeRun: (e) => runs.push(`${e.namespace}/${e.podName} ${e.containerName} ${e.probeType} ${e.result}`),
    });
    await startedLongAgo();
    mgr.addPod(
      pod({ readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 1, failureThreshold: 3 } }),
      '10.0.0.1',
    );
    mgr.containerStarted(UID, 'app', 'c1', Date.now());
    await vi.advanceTimersByTimeAsync(10);
    script.set('ready', 'failure');
    await vi.advanceTimersByTimeAsync(1000);
    script.set('ready', 'unknown', 'exec failed');
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs).toEqual(['kube-system/p-node1 app readiness success', 'kube-system/p-node1 app readiness failure']);
  });
});

// KEP-4781 (the kubelet of 1.35, ChangeContainerStatusOnKubeletRestart off): a container found
// running at the agent's start holds no initial result, so the status keeps what was reported
// for it before the restart, until a threshold is reached for it.
/** Container c1 with startup and readiness probes, found running 5 s before the agent started. */
async function adoptedWithStartupAndReadiness(): Promise<void> {
  const agentStart = Date.now();
  await startedLongAgo();
  mgr.addPod(
    pod({
      startupProbe: { exec: { command: ['start'] }, periodSeconds: 10 },
      readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 10 },
    }),
    '10.0.0.1',
  );
  mgr.containerStarted(UID, 'app', 'c1', agentStart - 5_000);
}

describe('a container found running at the agent’s start', () => {
  it('has no readiness until its probe reaches a threshold; one started since has the initial failure', async () => {
    newManager();
    const agentStart = Date.now();
    await startedLongAgo();
    mgr.addPod(
      pod({ readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 10, failureThreshold: 2 } }),
      '10.0.0.1',
    );
    mgr.containerStarted(UID, 'app', 'c1', agentStart - 5_000);
    expect(mgr.readiness(UID, 'app')).toBeUndefined();
    expect(mgr.started(UID, 'app')).toBe(true);
    script.set('ready', 'failure', 'not yet');
    await vi.advanceTimersByTimeAsync(10);
    expect(script.count('ready')).toBe(1);
    // One failure of two: still nothing recorded, the reported readiness stands.
    expect(mgr.readiness(UID, 'app')).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(mgr.readiness(UID, 'app')).toBe(false);
    // The first recorded result is a change from what the status showed, whatever the initial value.
    expect(results.at(-1)).toMatchObject({ probeType: 'readiness', result: 'failure', changed: true });

    // Its replacement, started after the agent, begins not ready as any new container does.
    mgr.containerStarted(UID, 'app', 'c2', Date.now());
    expect(mgr.readiness(UID, 'app')).toBe(false);
  });

  it('a success ends the wait at once, and a startup probe not yet run leaves started unknown', async () => {
    newManager();
    await adoptedWithStartupAndReadiness();
    expect(mgr.started(UID, 'app')).toBeUndefined();
    expect(mgr.readiness(UID, 'app')).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10);
    expect(mgr.started(UID, 'app')).toBe(true);
    await vi.advanceTimersByTimeAsync(10);
    expect(script.count('ready')).toBe(1);
    expect(mgr.readiness(UID, 'app')).toBe(true);
  });

  it('one the API server showed started is started at once and its startup probe is not run again', async () => {
    const reported = new ReportedStatuses();
    newManager(() => 0, undefined, reported);
    await adoptedWithStartupAndReadiness();
    // Nothing reported yet: unknown, as above.
    expect(mgr.started(UID, 'app')).toBeUndefined();
    reported.keep(UID, {
      containerStatuses: [
        {
          name: 'app',
          containerID: 'containerd://c1',
          started: true,
          ready: true,
          image: 'x',
          imageID: 'y',
          restartCount: 0,
        },
      ],
    });
    expect(mgr.started(UID, 'app')).toBe(true);
    await vi.advanceTimersByTimeAsync(30_010);
    expect(script.count('start')).toBe(0);
    // Readiness runs without waiting for a startup probe.
    expect(script.count('ready')).toBeGreaterThanOrEqual(3);
    expect(mgr.readiness(UID, 'app')).toBe(true);

    // Its replacement is probed for startup as any new container.
    mgr.containerStarted(UID, 'app', 'c2', Date.now());
    expect(mgr.started(UID, 'app')).toBe(false);
    await vi.advanceTimersByTimeAsync(10_010);
    expect(script.count('start')).toBe(1);
    expect(mgr.started(UID, 'app')).toBe(true);
  });

  it('another container of the same name reported started does not count', async () => {
    const reported = new ReportedStatuses();
    reported.keep(UID, {
      containerStatuses: [
        {
          name: 'app',
          containerID: 'containerd://old',
          started: true,
          ready: true,
          image: 'x',
          imageID: 'y',
          restartCount: 0,
        },
      ],
    });
    newManager(() => 0, undefined, reported);
    const agentStart = Date.now();
    await startedLongAgo();
    mgr.addPod(pod({ startupProbe: { exec: { command: ['start'] }, periodSeconds: 10 } }), '10.0.0.1');
    mgr.containerStarted(UID, 'app', 'c1', agentStart - 5_000);
    expect(mgr.started(UID, 'app')).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10);
    expect(script.count('start')).toBe(1);
  });
});
