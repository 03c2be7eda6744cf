// A node journal for tests, on a machine whose PID 1 is not systemd: the real systemd-journald runs
// alone in a mount namespace of its own, with a private tmpfs on /run (its sockets) and on /var/log
// (the node's log directory, for the files a test writes there, and the persistent journal in
// /var/log/journal, flushed to as at a node's boot). A
// program entered into that namespace (`enter`, e.g. the agent) sees that journal with the
// ordinary journalctl, and nothing of the machine's /run or /var/log. Lines are logged as a unit
// the way journald attributes them on a systemd node: the writer runs in a cgroup
// `<slice>/<unit>.service`, from which journald itself derives _SYSTEMD_UNIT.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAlive, run, sleep } from '../../dev/exec.js';
import { TMP_BASE } from '../../dev/paths.js';
import { endOrphanedRecords } from '../../dev/owned-records.js';
import { waitFor } from './wait.js';

const JOURNALD = '/lib/systemd/systemd-journald';
const RECORD = 'node-journal.json';

interface Record_ {
  ownerPid: number;
  pid: number;
  slice: string;
  dir: string;
}

export interface NodeJournal {
  /** journald's PID: its namespace is the node's. */
  readonly pid: number;
  /** Command prefix that runs a program in the node's mount namespace (it execs the program). */
  readonly enter: string[];
  /** Logs lines as `<unit>.service`, with `identifier` as SYSLOG_IDENTIFIER; resolves once journald has them. */
  log(unit: string, identifier: string, lines: string[]): Promise<void>;
  /** Writes a file under the node's /var/log (a path relative to it). */
  writeLogFile(relative: string, content: string): void;
  /** Makes a symlink under the node's /var/log. */
  symlinkLogFile(relative: string, target: string): void;
  /** journalctl in the node's namespace (what the agent would see). */
  journalctl(args: string[]): Promise<string>;
  /** journald's own output, for a test that failed. */
  journaldOutput(): string;
  stop(): Promise<void>;
}

/** Why this machine cannot run it, or undefined when it can. */
export function nodeJournalUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (mount namespaces, cgroups)';
  if (!fs.existsSync(JOURNALD)) return `no ${JOURNALD}`;
  for (const tool of ['/usr/bin/unshare', '/usr/bin/nsenter', '/usr/bin/systemd-cat', '/usr/bin/journalctl'])
    if (!fs.existsSync(tool)) return `no ${tool}`;
  if (cgroupRoots().length === 0) return 'no cgroup hierarchy journald reads units from';
  return undefined;
}

/**
 * The hierarchies journald may read a unit from: cgroup2 (unified, or the hybrid's
 * /sys/fs/cgroup/unified) and the legacy name=systemd one. The writer joins all that exist.
 */
function cgroupRoots(): string[] {
  const roots: string[] = [];
  for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const mountpoint = line.slice(0, sep).split(' ')[4] ?? '';
    const [fstype, , opts = ''] = line.slice(sep + 3).split(' ');
    if (!mountpoint.startsWith('/sys/fs/cgroup')) continue;
    if (fstype === 'cgroup2' || (fstype === 'cgroup' && opts.split(',').includes('name=systemd')))
      roots.push(mountpoint);
  }
  return roots;
}

function removeCgroups(slice: string): void {
  for (const root of cgroupRoots()) {
    const dir = path.join(root, slice);
    if (!fs.existsSync(dir)) continue;
    try {
      // cgroup directories go with rmdir only, the units first.
      for (const e of fs.readdirSync(dir, { withFileTypes: true }))
        if (e.isDirectory()) fs.rmdirSync(path.join(dir, e.name));
      fs.rmdirSync(dir);
    } catch {
      // A writer still in it: the next run's stale cleanup removes it.
    }
  }
}

async function teardown(r: Record_): Promise<void> {
  if (isAlive(r.pid)) process.kill(r.pid, 'SIGKILL');
  const deadline = Date.now() + 10_000;
  while (isAlive(r.pid) && Date.now() < deadline) await sleep(50);
  removeCgroups(r.slice);
  fs.rmSync(r.dir, { recursive: true, force: true });
}

/** Ends node journals whose test process is gone (a crashed run). */
export async function cleanupStaleNodeJournals(): Promise<void> {
  await endOrphanedRecords('node-journal-', RECORD, teardown);
}

export async function startNodeJournal(): Promise<NodeJournal> {
  await cleanupStaleNodeJournals();
  const id = randomBytes(4).toString('hex');
  const dir = path.join(TMP_BASE, `node-journal-${id}`);
  fs.mkdirSync(dir, { recursive: true });
  const slice = `/bootlet-node-journal-${id}.slice`;
  const logFile = path.join(dir, 'journald.log');
  const logFd = fs.openSync(logFile, 'a');
  // unshare execs sh, which execs journald: the PID is journald's and its namespace the node's.
  const child = spawn(
    '/usr/bin/unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      `mount -t tmpfs -o mode=755 tmpfs /run && mount -t tmpfs -o mode=755 tmpfs /var/log && mkdir -p /var/log/journal && exec ${JOURNALD}`,
    ],
    { stdio: ['ignore', logFd, logFd] },
  );
  fs.closeSync(logFd);
  const pid = child.pid!;
  const record: Record_ = { ownerPid: process.pid, pid, slice, dir };
  fs.writeFileSync(path.join(dir, RECORD), JSON.stringify(record));
  const rootOf = (p: string): string => `/proc/${pid}/root${p}`;
  const enter = ['/usr/bin/nsenter', `--mount=/proc/${pid}/ns/mnt`, '--'];
  try {
    await waitFor(() => fs.existsSync(rootOf('/run/systemd/journal/stdout')), {
      timeoutMs: 20_000,
      what: `journald's stream socket (journald said: ${fs.readFileSync(logFile, 'utf8').slice(-500)})`,
    });
  } catch (e) {
    await teardown(record);
    throw e;
  }

  const journalctl = (args: string[]): Promise<string> =>
    run(enter[0]!, [...enter.slice(1), '/usr/bin/journalctl', ...args], { timeoutMs: 30_000 });
  // A persistent journal (/var/log/journal), as on most nodes: what systemd-journal-flush.service does at boot.
  try {
    await journalctl(['--flush']);
  } catch (e) {
    await teardown(record);
    throw e;
  }

  return {
    pid,
    enter,
    async log(unit, identifier, lines) {
      const cg = path.join(slice, `${unit}.service`);
      const roots = cgroupRoots();
      for (const root of roots) fs.mkdirSync(path.join(root, cg), { recursive: true });
      const join = roots.map((root) => `echo $$ > ${path.join(root, cg, 'cgroup.procs')}`).join('; ');
      // The shell joins the unit's cgroup, then becomes systemd-cat. The writer stays until journald
      // has the lines with their unit: journald reads a writer's cgroup from /proc, and a writer
      // that has already exited leaves its lines without one.
      const writer = spawn(
        enter[0]!,
        [...enter.slice(1), 'sh', '-c', `${join}; exec /usr/bin/systemd-cat -t "$0"`, identifier],
        { stdio: ['pipe', 'ignore', 'pipe'] },
      );
      let stderr = '';
      writer.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => writer.on('close', resolve));
      writer.stdin.write(lines.map((l) => `${l}\n`).join(''));
      try {
        const last = lines[lines.length - 1];
        if (last !== undefined)
          await waitFor(
            async () => (await journalctl(['--no-pager', '-o', 'cat', `--unit=${unit}`])).split('\n').includes(last),
            { timeoutMs: 20_000, what: `journald to have "${last}" of ${unit}.service (writer said: ${stderr})` },
          );
      } finally {
        writer.stdin.end();
        await exited;
      }
    },
    writeLogFile(relative, content) {
      const f = rootOf(path.posix.join('/var/log', relative));
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, content);
    },
    symlinkLogFile(relative, target) {
      fs.symlinkSync(target, rootOf(path.posix.join('/var/log', relative)));
    },
    journalctl,
    journaldOutput: () => fs.readFileSync(logFile, 'utf8'),
    stop: () => teardown(record),
  };
}
