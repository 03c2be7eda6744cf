// BENCH_KUBEADM_TRACE=1: each kubeadm round's timeline on stderr, ms from the write (bootlet) or the
// first call (raw): bootlet's own lines for the four pods, and each pod's CRI calls as containerd
// logged their receipt and return. `mono0` is the clock start on CLOCK_MONOTONIC (µs), which is the
// clock of a V8 CPU profile's timestamps (an executable built with BOOTLET_EXEC_ARGV adding `--cpu-prof`).
import { containerdEvents, marks } from './containerd-log.js';

export const KUBEADM_TRACE = process.env.BENCH_KUBEADM_TRACE === '1';

const PODS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

const write = (line: string): void => void process.stderr.write(`kubeadm trace ${line}\n`);

export function traceStart(side: 'raw' | 'bootlet'): void {
  if (KUBEADM_TRACE) write(`${side} mono0 ${(process.hrtime.bigint() / 1000n).toString()}`);
}

/** The agent's lines about the four pods (not its Events), from the write on. */
export function traceAgent(records: readonly Record<string, unknown>[], wall0: number): void {
  if (!KUBEADM_TRACE) return;
  for (const r of records) {
    const at = Number(r.ts) * 1000 - wall0;
    if (at < 0 || r.msg === 'Event' || !String(r.pod ?? '').startsWith('kube-system/')) continue;
    write(
      `${at.toFixed(0).padStart(5)} ${String(r.pod).slice('kube-system/'.length).padEnd(32)} ${String(r.msg)} ${String(r.container ?? r.reason ?? '')}`,
    );
  }
}

/** Each pod's CRI calls, as containerd's log has them. */
export function traceRuntime(side: 'raw' | 'bootlet', containerdLog: string, wall0: number): void {
  if (!KUBEADM_TRACE) return;
  const events = containerdEvents(containerdLog).filter((e) => e.at >= wall0);
  const text = events.map((e) => e.msg).join('\n');
  for (const pod of PODS) {
    const name = new RegExp(`RunPodSandbox for &PodSandboxMetadata\\{Name:(${pod}[^,]*),`).exec(text)?.[1] ?? pod;
    const m = marks(events, name);
    write(
      `${side} ${pod.padEnd(24)} ${Object.entries(m)
        .map(([k, v]) => `${k} ${(v - wall0).toFixed(0)}`)
        .join(' ')}`,
    );
  }
}
