import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { debianKubectl } from '../../../dev/kubectl.js';

/** Debian sid's kubectl (dev/kubectl.ts), fetched once when a test first needs it. */
export const KUBECTL = (await debianKubectl()).path;

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A real kubectl (Debian's by default, or `binary`) against a kubeconfig, with a private discovery
 * cache (ports get reused), one per binary.
 */
export class Kubectl {
  constructor(
    private readonly kubeconfig: string,
    private readonly dir: string,
    readonly binary: string = KUBECTL,
  ) {}

  private args(args: string[]): string[] {
    const cache =
      this.binary === KUBECTL
        ? 'kube-cache'
        : `kube-cache-${createHash('sha256').update(this.binary).digest('hex').slice(0, 8)}`;
    return ['--kubeconfig', this.kubeconfig, '--cache-dir', join(this.dir, cache), ...args];
  }

  /** Runs kubectl without blocking the event loop (the fake server lives in this process). */
  run(args: string[], timeoutMs = 60_000, input?: string): Promise<KubectlResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, this.args(args), {
        stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        env: { ...process.env, HOME: this.dir },
      });
      if (input !== undefined) child.stdin?.end(input);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
    });
  }

  async ok(args: string[], timeoutMs?: number, input?: string): Promise<string> {
    const r = await this.run(args, timeoutMs, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** Starts a long-running kubectl (e.g. `get -w`); output accumulates until stop(). */
  start(args: string[]): RunningKubectl {
    const child = spawn(this.binary, this.args(args), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: this.dir },
    });
    return new RunningKubectl(child);
  }
}

export class RunningKubectl {
  stdout = '';
  stderr = '';
  private readonly exited: Promise<number>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (d: Buffer) => (this.stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  }

  /** Resolves with the exit code once kubectl ends by itself. */
  get done(): Promise<number> {
    return this.exited;
  }

  async stop(): Promise<number> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}
