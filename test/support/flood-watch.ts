// Watches an agent from outside through a flood of manifests, as an operator's tooling would: its
// /healthz answer time at a fixed rate, its resident memory, and, over the CRI, how many pods are
// mid-start at once (a ready sandbox with no running container yet) and when each sandbox appeared.
// Shared by the flood e2e test and the bench's flood section.
import * as http from 'node:http';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { ContainerState, PodSandboxState, type RuntimeService } from '../../src/cri/cri-types.js';

/** Polls http://127.0.0.1:<port>/healthz every `everyMs`, one request at a time; each answer's time in ms. */
export function pollHealthz(port: number, everyMs = 50): { readonly times: number[]; readonly startedAt: number[]; readonly failures: string[]; stop(): Promise<void> } {
  const times: number[] = [];
  /** When each request was sent (performance.now()), index for index with `times`. */
  const startedAt: number[] = [];
  const failures: string[] = [];
  let stopped = false;
  const once = (): Promise<void> =>
    new Promise((resolve) => {
      const t0 = performance.now();
      startedAt.push(t0);
      const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 30_000 }, (res) => {
        res.resume();
        res.on('end', () => {
          times.push(performance.now() - t0);
          if (res.statusCode !== 200) failures.push(`status ${res.statusCode}`);
          resolve();
        });
      });
      req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
      req.on('error', (err) => {
        times.push(performance.now() - t0);
        failures.push(err.message);
        resolve();
      });
    });
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      await once();
      const rest = everyMs - (performance.now() - t0);
      if (rest > 0 && !stopped) await new Promise((r) => setTimeout(r, rest));
    }
  })();
  return {
    times,
    startedAt,
    failures,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

export function rssMiBOf(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

/** The highest resident memory of `pid` seen every `everyMs`. */
export function sampleRss(pid: number, everyMs = 100): { peak(): number; stop(): void } {
  let peak = 0;
  const take = (): void => {
    try {
      peak = Math.max(peak, rssMiBOf(pid));
    } catch {
      // the process is gone: its last sample stands
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    peak: () => peak,
    stop: () => clearInterval(timer),
  };
}

export interface CriFloodView {
  /** Most pods seen mid-start at once: a ready sandbox, no running container yet. */
  maxStarting(): number;
  /** Sandbox ID -> when this poller first saw it (performance.now()). */
  readonly firstSeen: Map<string, number>;
  /** Sandboxes (any state) of the flood's pods in the last poll. */
  sandboxes(): number;
  /** Their running containers in the last poll. */
  running(): number;
  /** Resolves after a poll that started after this call. */
  fresh(): Promise<void>;
  stop(): Promise<void>;
}

/** Polls the CRI for the pods whose names start with `prefix`. */
export function watchCri(runtime: RuntimeService, prefix: string, everyMs = 100): CriFloodView {
  const firstSeen = new Map<string, number>();
  let maxStarting = 0;
  let sandboxes = 0;
  let running = 0;
  let stopped = false;
  let waiters: Array<() => void> = [];
  const poll = async (): Promise<void> => {
    const [sbs, cs] = await Promise.all([runtime.listPodSandbox(), runtime.listContainers()]);
    const now = performance.now();
    const mine = sbs.filter((s) => s.metadata?.name.startsWith(prefix));
    const runningIn = new Set(cs.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => c.podSandboxId));
    for (const s of mine) if (!firstSeen.has(s.id)) firstSeen.set(s.id, now);
    const ids = new Set(mine.map((s) => s.id));
    sandboxes = mine.length;
    running = cs.filter((c) => c.state === ContainerState.CONTAINER_RUNNING && ids.has(c.podSandboxId)).length;
    const starting = mine.filter((s) => s.state === PodSandboxState.SANDBOX_READY && !runningIn.has(s.id)).length;
    maxStarting = Math.max(maxStarting, starting);
  };
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      const answer = waiters;
      waiters = [];
      await poll().catch(() => undefined);
      for (const w of answer) w();
      const rest = everyMs - (performance.now() - t0);
      if (rest > 0 && !stopped) await new Promise((r) => setTimeout(r, rest));
    }
  })();
  return {
    maxStarting: () => maxStarting,
    firstSeen,
    sandboxes: () => sandboxes,
    running: () => running,
    fresh: () => new Promise<void>((resolve) => waiters.push(resolve)),
    async stop() {
      stopped = true;
      await loop;
      for (const w of waiters) w();
    },
  };
}

/** Counts the agent's log lines holding `needle` as they come, without parsing them all again. */
export function countLines(lines: readonly string[], needle: string): () => number {
  let seen = 0;
  let count = 0;
  return () => {
    for (; seen < lines.length; seen++) if (lines[seen]!.includes(needle)) count++;
    return count;
  };
}

/**
 * A bare HTTP server in a process of its own, answering every path with 200 at once: polled beside
 * the agent's /healthz, its answer times are what the machine's load alone costs an answer (the
 * poller's own process included), so the agent's stalls can be told from the machine's.
 */
export async function startControlServer(port: number): Promise<{ stop(): Promise<void> }> {
  const code = `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1', () => process.stdout.write('up\\n'))`;
  const proc = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    proc.stdout.once('data', () => resolve());
    proc.once('exit', (c) => reject(new Error(`control server exited (${c}) before it listened`)));
  });
  return {
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** The q-quantile (0..1) of `times`, in whole ms, over the requests sent in [from, to). */
export function quantileMs(poll: { readonly times: readonly number[]; readonly startedAt: readonly number[] }, q: number, from = 0, to = Infinity): number {
  const xs = poll.times.filter((_, i) => poll.startedAt[i]! >= from && poll.startedAt[i]! < to).sort((a, b) => a - b);
  return Math.round(xs[Math.max(0, Math.ceil(q * xs.length) - 1)] ?? 0);
}

/** CPU time (user + system) `pid` has used so far, in ms (/proc/<pid>/stat, at 100 ticks a second). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
