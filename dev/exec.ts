// Small process helpers for the dev harness: run a command, get its stdout, fail with its stderr.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface RunOptions {
  timeoutMs?: number;
  input?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly code: number | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`${command} failed (exit ${code}): ${(stderr || stdout).trim().slice(-2000)}`);
    this.name = 'CommandError';
  }
}

export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      {
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
        env: opts.env ?? process.env,
        cwd: opts.cwd,
        killSignal: 'SIGKILL',
      },
      (err, stdout, stderr) => {
        if (err) {
          const code = typeof err.code === 'number' ? err.code : null;
          const why = err.killed ? `${stderr}\n(killed after ${opts.timeoutMs ?? 120_000} ms)` : stderr || err.message;
          reject(new CommandError([cmd, ...args].join(' '), code, stdout, why));
        } else {
          resolve(stdout);
        }
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Like run, but never throws: for best-effort cleanup steps. */
export async function tryRun(cmd: string, args: string[], opts: RunOptions = {}): Promise<string | undefined> {
  try {
    return await run(cmd, args, opts);
  } catch {
    return undefined;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function isAlive(pid: number): boolean {
  if (!pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie still answers signal 0; treat it as dead.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
