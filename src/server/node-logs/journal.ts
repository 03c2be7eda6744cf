// The journal side of the node log query (kubelet_server_journal_linux.go): journalctl with the
// kubelet's arguments, a service counting as the journal's when journalctl knows a unit of its
// name, and journalctl's output and errors streamed to the client as they come. No shell is
// involved: every service name and the pattern are single arguments, already checked.
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { copyInto } from './copy-stream.js';
import { journalctlTime } from './go-time.js';
import type { NodeLogOptions } from './node-log-query.js';

/** Most of `journalctl --field _SYSTEMD_UNIT` read to tell journal services from file ones. */
const MAX_UNIT_LIST_BYTES = 4 * 1024 * 1024;

/**
 * getLoggingCmd's arguments. One deliberate difference: --until is the untilTime (the kubelet
 * passes its sinceTime there), and both times are the instant in UTC, said so.
 */
export function journalctlArgs(o: NodeLogOptions, services: readonly string[]): string[] {
  const args = ['--utc', '--no-pager', '--output=short-precise'];
  if (o.sinceTime) args.push(`--since=${journalctlTime(o.sinceTime)}`);
  if (o.untilTime) args.push(`--until=${journalctlTime(o.untilTime)}`);
  if (o.tailLines !== undefined) args.push('--pager-end', `--lines=${o.tailLines}`);
  for (const s of services) if (s !== '') args.push(`--unit=${s}`);
  if (o.pattern !== '') args.push(`--grep=${o.pattern}`);
  if (o.boot !== undefined) args.push('--boot', String(o.boot));
  return args;
}

/**
 * The units the journal has entries of (`journalctl --field _SYSTEMD_UNIT`, stdout and stderr as
 * the kubelet reads them), or undefined when journalctl failed: then no service is the journal's.
 */
export function journalUnits(journalctl: string, signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(journalctl, ['--field', '_SYSTEMD_UNIT'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      signal,
      killSignal: 'SIGKILL',
    });
    let out = '';
    const take = (d: Buffer): void => {
      if (out.length < MAX_UNIT_LIST_BYTES) out += d.toString('utf8');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? out : undefined));
  });
}

/** checkForNativeLogger: journalctl knows `<service>.service` (a substring test, as the kubelet's). */
export const logsToJournal = (units: string | undefined, service: string): boolean =>
  units !== undefined && units.includes(`${service}.service`);

export type JournalRun = 'exited' | 'not-started';

/**
 * copyServiceLogs: journalctl's stdout and stderr into `out`; a failing journalctl has said why
 * itself. 'not-started' when it could not be run at all.
 */
export function copyJournal(
  journalctl: string,
  args: string[],
  out: Writable,
  signal: AbortSignal,
): Promise<JournalRun> {
  return new Promise((resolve) => {
    const child = spawn(journalctl, args, { stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
    let started = false;
    child.on('spawn', () => (started = true));
    const copies = Promise.all([copyInto(child.stdout, out, signal), copyInto(child.stderr, out, signal)]);
    child.on('error', () => {
      if (!started) resolve('not-started');
    });
    child.on('close', () => {
      void copies.then(() => resolve(started ? 'exited' : 'not-started'));
    });
  });
}
