// Probe scheduling under load: 100 probed "containers" (real HTTP and TCP endpoints on 127.0.0.1)
// with periodSeconds 1 while the event loop is kept busy, reporting how late probes start (drift
// between a tick's due time and its start) against a baseline of plain 1 s timers in the same run.
// Run alone with `npx tsx bench/prober.ts`.
import * as http from 'node:http';
import * as net from 'node:net';
import { pathToFileURL } from 'node:url';
import type { Pod } from 'kubernetes-types/core/v1';
import { DriftRecorder } from '../src/prober/drift.js';
import { ProberManager } from '../src/prober/prober-manager.js';
import { realHandlers, type ProbeHandlers } from '../src/prober/run-probe.js';
import type { DriftStats } from '../src/prober/types.js';

export interface ProberBenchOptions {
  containers?: number;
  durationMs?: number;
  /** Synthetic load: a busy loop of `busyMs` every `everyMs`. */
  busyMs?: number;
  everyMs?: number;
  /** Ticks before this are not measured (first-probe spreading, connection warm-up). */
  warmupMs?: number;
}

export interface ProberBenchResult {
  containers: number;
  durationMs: number;
  probes: number;
  probesPerSecond: number;
  failures: number;
  drift: DriftStats;
  /** The same statistics for plain 1 s timers running beside the probes: the event loop's floor. */
  baseline: DriftStats;
}

interface Endpoint {
  port: number;
  close(): Promise<void>;
}

function listen(server: http.Server | net.Server): Promise<Endpoint> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({
        port,
        close: () =>
          new Promise<void>((r) => {
            if (server instanceof http.Server) server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

function benchPod(i: number, port: number): Pod {
  const action = i % 2 === 0 ? { httpGet: { port, path: '/healthz' } } : { tcpSocket: { port } };
  return {
    metadata: { name: `probe-bench-${i}`, namespace: 'default', uid: `probe-bench-${i}` },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'none',
          livenessProbe: { ...action, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 1_000_000 },
        },
      ],
    },
  };
}

export async function runProberBench(opts: ProberBenchOptions = {}): Promise<ProberBenchResult> {
  const n = opts.containers ?? 100;
  const durationMs = opts.durationMs ?? 20_000;
  const busyMs = opts.busyMs ?? 20;
  const everyMs = opts.everyMs ?? 100;
  const warmupMs = opts.warmupMs ?? 2_000;

  const endpoints: Endpoint[] = [];
  for (let i = 0; i < n; i++) {
    endpoints.push(
      await listen(i % 2 === 0 ? http.createServer((_, res) => res.end('ok')) : net.createServer((s) => s.end())),
    );
  }

  let probes = 0;
  let failures = 0;
  const real = realHandlers({ execSync: () => Promise.reject(new Error('no exec in this bench')) });
  const count =
    <A extends unknown[]>(f: (...a: A) => ReturnType<ProbeHandlers['tcp']>) =>
    async (...a: A) => {
      const o = await f(...a);
      probes++;
      if (o.result !== 'success') failures++;
      return o;
    };
  const handlers: ProbeHandlers = { exec: real.exec, http: count(real.http), tcp: count(real.tcp), grpc: real.grpc };
  const mgr = new ProberManager({ runtime: { execSync: () => Promise.reject(new Error('unused')) }, handlers });

  const load = setInterval(() => {
    const end = performance.now() + busyMs;
    while (performance.now() < end) {
      /* the synthetic load: hold the event loop */
    }
  }, everyMs);

  // Baseline: as many plain 1 s timer chains, started at spread offsets like the probes.
  const baseline = new DriftRecorder();
  let baselineOn = true;
  const baselineTimers = new Set<NodeJS.Timeout>();
  const chain = (due: number): void => {
    const t = setTimeout(
      () => {
        baselineTimers.delete(t);
        if (!baselineOn) return;
        baseline.record(due, Date.now());
        chain(due + 1000);
      },
      Math.max(0, due - Date.now()),
    );
    baselineTimers.add(t);
  };

  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    const pod = benchPod(i, endpoints[i]!.port);
    mgr.addPod(pod, '127.0.0.1');
    mgr.containerStarted(pod.metadata!.uid!, 'app', `c-${i}`, t0);
    chain(t0 + Math.random() * 1000);
  }
  await new Promise((r) => setTimeout(r, warmupMs));
  mgr.resetDrift();
  baseline.reset();
  const probesAtStart = probes;
  const measuredFrom = Date.now();
  await new Promise((r) => setTimeout(r, durationMs));
  const measuredMs = Date.now() - measuredFrom;
  const result: ProberBenchResult = {
    containers: n,
    durationMs: measuredMs,
    probes: probes - probesAtStart,
    probesPerSecond: ((probes - probesAtStart) * 1000) / measuredMs,
    failures,
    drift: mgr.drift(),
    baseline: baseline.stats(),
  };

  clearInterval(load);
  baselineOn = false;
  for (const t of baselineTimers) clearTimeout(t);
  mgr.stop();
  for (const e of endpoints) await e.close();
  return result;
}

export function printProberBench(r: ProberBenchResult): void {
  const rows: [string, string, string, string][] = [
    ['drift ms', 'p50', 'p95', 'max'],
    ['probes', r.drift.p50Ms.toFixed(1), r.drift.p95Ms.toFixed(1), r.drift.maxMs.toFixed(1)],
    ['plain timers (baseline)', r.baseline.p50Ms.toFixed(1), r.baseline.p95Ms.toFixed(1), r.baseline.maxMs.toFixed(1)],
  ];
  const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) console.log(row.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
  console.log(
    `${r.containers} probed containers, period 1 s, ${(r.durationMs / 1000).toFixed(1)} s measured: ${r.probes} probes (${r.probesPerSecond.toFixed(1)}/s, expected ${r.containers}/s), ${r.failures} not successful, ${r.drift.count} ticks measured`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runProberBench().then(printProberBench, (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
