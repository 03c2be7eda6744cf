// logind's shutdown delay lock, as the kubelet takes it: Inhibit("shutdown", "kubelet", why,
// "delay"). logind hands the lock over as a file descriptor and holds the shutdown back until
// every copy of it is closed. Node cannot receive a descriptor over a unix socket (SCM_RIGHTS), so
// systemd-inhibit makes the call and holds the descriptor for as long as its child runs; the child
// waits for its stdin to close. Closing that pipe releases the lock, and so does the agent's death:
// a dead agent never holds a shutdown back.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logind } from './logind.js';

export const INHIBIT_WHO = 'kubelet';
export const INHIBIT_WHY = 'Kubelet needs time to handle node shutdown';
const CONFIRM_TIMEOUT_MS = 10_000;
const CONFIRM_POLL_MS = 50;
const RELEASE_TIMEOUT_MS = 5_000;

export interface InhibitLockOptions {
  /** systemd-inhibit, found on PATH by default. */
  command?: string;
  env?: NodeJS.ProcessEnv;
}

export class InhibitLock {
  private exited = false;
  private readonly exit: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    this.exit = new Promise((resolve) => {
      child.once('exit', () => {
        this.exited = true;
        resolve();
      });
      child.once('error', () => {
        this.exited = true;
        resolve();
      });
    });
  }

  /**
   * Takes the lock; resolves once logind lists it (the inhibitor with systemd-inhibit's PID), so
   * a shutdown that starts after this is delayed.
   */
  static async take(logind: Logind, opts: InhibitLockOptions = {}): Promise<InhibitLock> {
    const child = spawn(
      opts.command ?? 'systemd-inhibit',
      [
        '--what=shutdown',
        `--who=${INHIBIT_WHO}`,
        `--why=${INHIBIT_WHY}`,
        '--mode=delay',
        '/bin/sh',
        '-c',
        'exec cat >/dev/null',
      ],
      { stdio: ['pipe', 'ignore', 'pipe'], env: opts.env ?? process.env },
    );
    const lock = new InhibitLock(child);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.stdin?.on('error', () => {}); // a child that died: seen through 'exit'
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const deadline = Date.now() + CONFIRM_TIMEOUT_MS;
    for (;;) {
      if (lock.exited) {
        const err = await Promise.race([spawnError, Promise.resolve(undefined)]);
        throw new Error(
          `failed creating systemd inhibitor: ${err?.message ?? (stderr.trim() || `systemd-inhibit exited with ${child.exitCode}`)}`,
        );
      }
      const held = await logind.listInhibitors().catch(() => []);
      if (
        child.pid !== undefined &&
        held.some((i) => i.pid === child.pid && i.what.split(':').includes('shutdown') && i.mode === 'delay')
      )
        return lock;
      if (Date.now() > deadline) {
        await lock.release();
        throw new Error(
          `failed creating systemd inhibitor: logind does not list it after ${CONFIRM_TIMEOUT_MS / 1000} s`,
        );
      }
      await new Promise((r) => setTimeout(r, CONFIRM_POLL_MS));
    }
  }

  get held(): boolean {
    return !this.exited;
  }

  /** Lets the shutdown go on: ends systemd-inhibit's child, so it closes the descriptor and exits. */
  async release(): Promise<void> {
    if (this.exited) return;
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), RELEASE_TIMEOUT_MS);
    await this.exit;
    clearTimeout(timer);
  }
}
