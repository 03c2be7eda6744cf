// Watches an agent from outside through a flood of manifests, as an operator's tooling would: its
// /healthz answer time at a fixed rate, its resident memory, and, over the CRI, how many pods are
// mid-start at once (a ready sandbox with no running container yet) and when each sandbox appeared.
// Shared by the flood e2e test and the bench's flood section.
import { readFileSync } from 'node:fs';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { ContainerState, PodSandboxState, type RuntimeService } from '../../src/cri/cri-types.js';

/** Runs `code` in a Node process of its own; resolves once it has written its first output (it is up). */
async function startScript(
  code: string,
  what: string,
): Promise<{ proc: ChildProcessByStdio<Writable, Readable, null>; exited: Promise<void> }> {
  const proc = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    proc.stdout.once('data', () => resolve());
    proc.once('exit', (c) => reject(new Error(`${what} exited (${c}) before it was up`)));
  });
  return { proc, exited };
}

/** One poller's answers: each request's time in ms, when it was sent (this process's performance.now()), what failed. */
export interface HealthzPoll {
  readonly times: number[];
  readonly startedAt: number[];
  readonly failures: string[];
}

/**
 * Polls http://127.0.0.1:<port>/healthz of each port every `everyMs`, one request at a time per
 * port, from a process of its own: the test's own work (writing thousands of files) then delays
 * neither poller, and both see the same machine.
 */
export async function pollHealthzOutside(
  ports: readonly number[],
  everyMs: number,
): Promise<{ stop(): Promise<HealthzPoll[]> }> {
  const code = `
const http = require('node:http');
const now = () => performance.timeOrigin + performance.now();
let stopped = false;
const polls = ${JSON.stringify(ports)}.map((port) => {
  const r = { times: [], startedAt: [], failures: [] };
  const once = () => new Promise((resolve) => {
    const t0 = now();
    r.startedAt.push(t0);
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 30000 }, (res) => {
      res.resume();
      res.on('end', () => { r.times.push(now() - t0); if (res.statusCode !== 200) r.failures.push('status ' + res.statusCode); resolve(); });
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', (err) => { r.times.push(now() - t0); r.failures.push(err.message); resolve(); });
  });
  r.loop = (async () => {
    while (!stopped) {
      const t0 = now();
      await once();
      const rest = ${everyMs} - (now() - t0);
      if (rest > 0 && !stopped) await new Promise((res) => setTimeout(res, rest));
    }
  })();
  return r;
});
process.stdout.write('up\\n');
process.stdin.resume();
// The test gone without a word: nothing to report to.
process.stdin.once('end', () => process.exit(0));
process.stdin.once('data', async () => {
  stopped = true;
  await Promise.all(polls.map((p) => p.loop));
  process.stdout.write(JSON.stringify(polls.map(({ times, startedAt, failures }) => ({ times, startedAt, failures }))) + '\\n', () => process.exit(0));
});`;
  const { proc, exited } = await startScript(code, 'healthz poller');
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  let result: Promise<HealthzPoll[]> | undefined;
  return {
    stop() {
      result ??= (async () => {
        proc.stdin.write('stop\n');
        await exited;
        const polls = JSON.parse(out) as HealthzPoll[];
        // Into this process's clock, as the test's own marks.
        for (const p of polls)
          for (let i = 0; i < p.startedAt.length; i++) p.startedAt[i] = p.startedAt[i]! - performance.timeOrigin;
        return polls;
      })();
      return result;
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
    const runningIn = new Set(
      cs.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => c.podSandboxId),
    );
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
  const { proc, exited } = await startScript(code, 'control server');
  return {
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** The q-quantile (0..1) of `times`, in whole ms, over the requests sent in [from, to). */
export function quantileMs(
  poll: { readonly times: readonly number[]; readonly startedAt: readonly number[] },
  q: number,
  from = 0,
  to = Infinity,
): number {
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
