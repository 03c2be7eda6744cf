// Runs the packaged bootlet executable (build/bootlet) for end-to-end tests: its log lines are
// kept for assertions, and it can be stopped gently or SIGKILLed like a crashed agent.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CGROUP_V1_AGENT_ARGS } from '../../dev/cgroup-v1-host.js';
import { waitFor } from './wait.js';

export const BOOTLET_EXE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'build', 'bootlet');

export interface AgentOptions {
  manifests: string;
  endpoint: string;
  rootDir: string;
  podLogsDir: string;
  nodeName?: string;
  extraArgs?: string[];
  configFile?: string;
  /** healthz is off unless given (tests run several agents on one machine). */
  healthzPort?: number;
  /** Left to the agent's default (off) unless given. */
  readOnlyPort?: number;
  /** The kubelet API (port): off (--enable-server=false) unless given, since 10250 is shared by every agent of a run. */
  kubeletPort?: number;
  /** A command that runs the agent, e.g. nsenter into a test systemd's namespaces (dev/systemd-node.ts). */
  wrap?: string[];
  /** A command that execs the agent (its PID stays the agent's), e.g. a shell that sets a variable first. */
  execWrap?: string[];
  /** Added to the agent's environment (NOTIFY_SOCKET, WATCHDOG_USEC, ...). */
  env?: Record<string, string>;
}

export interface RunningAgent {
  readonly proc: ChildProcess;
  /** Every line bootlet wrote to stderr/stdout, parsed when JSON. */
  readonly lines: string[];
  records(): Record<string, unknown>[];
  waitForLog(
    pred: (r: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export function agentArgs(o: AgentOptions): string[] {
  const args = [
    `--pod-manifest-path=${o.manifests}`,
    `--container-runtime-endpoint=${o.endpoint}`,
    `--root-dir=${o.rootDir}`,
    `--hostname-override=${o.nodeName ?? 'node-e2e'}`,
    '--logging-format=json',
    `--healthz-port=${o.healthzPort ?? 0}`,
    ...(o.readOnlyPort === undefined ? [] : [`--read-only-port=${o.readOnlyPort}`]),
    ...(o.kubeletPort === undefined ? ['--enable-server=false'] : [`--port=${o.kubeletPort}`]),
    '--v=2',
    ...CGROUP_V1_AGENT_ARGS,
    ...(o.extraArgs ?? []),
  ];
  if (o.configFile) args.push(`--config=${o.configFile}`);
  return args;
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export function startAgent(o: AgentOptions): RunningAgent {
  return o.wrap
    ? spawnAgent(agentArgs(o), o.wrap, o.env)
    : spawnAgent(agentArgs(o), o.execWrap, o.env, { execs: true });
}

/** Runs build/bootlet with exactly `agentArgv` (e.g. what systemd makes of kubeadm's drop-in). */
/**
 * `execs`: the wrapper execs the agent (its PID is the agent's), so signals go to that PID. A
 * wrapper that stays (nsenter) has the agent as its child instead. Taking an exec-ing wrapper's
 * first child for the agent killed whatever the agent had running at that moment (a systemd-notify
 * of its watchdog ping), and the agent lived on.
 */
export function spawnAgent(
  agentArgv: string[],
  wrap?: string[],
  env?: Record<string, string>,
  opts: { execs?: boolean } = {},
): RunningAgent {
  if (!existsSync(BOOTLET_EXE)) throw new Error(`${BOOTLET_EXE} is missing: run npm run build first`);
  const [cmd, ...args] = [...(wrap ?? []), BOOTLET_EXE, ...agentArgv] as [string, ...string[]];
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const lines: string[] = [];
  const collect = (chunk: Buffer, carry: { rest: string }): void => {
    const text = carry.rest + chunk.toString('utf8');
    const parts = text.split('\n');
    carry.rest = parts.pop() ?? '';
    for (const l of parts) if (l.trim()) lines.push(l);
  };
  const out = { rest: '' };
  const err = { rest: '' };
  proc.stdout?.on('data', (c: Buffer) => collect(c, out));
  proc.stderr?.on('data', (c: Buffer) => collect(c, err));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const records = (): Record<string, unknown>[] =>
    lines.flatMap((l) => {
      try {
        // A line for the journal starts with its priority (<6>): the record follows it.
        return [JSON.parse(l.replace(/^<\d>/, '')) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return {
    proc,
    lines,
    records,
    waitForLog: (pred, what, timeoutMs = 30_000) =>
      waitFor(() => records().find(pred), { timeoutMs, what: `log: ${what}` }),
    async kill(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      // A wrapper (nsenter) does not pass signals on: the agent is its child.
      const target = wrap && !opts.execs ? childPids(proc.pid!)[0] : proc.pid;
      if (target !== undefined) process.kill(target, signal);
      else proc.kill(signal);
      return exited;
    },
  };
}
