// A real systemd for tests of the systemd cgroup driver, on a machine whose PID 1 is not systemd:
// systemd 252 runs as PID 1 of its own PID, mount and cgroup namespaces, in a cgroup subtree of
// its own (remounted so that it sees that subtree as the whole tree), with a private /run and a
// unit set of one empty target. containerd, runc and bootlet are started inside the same
// namespaces (see `enter`) so they reach /run/systemd/private and see the same cgroup paths.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CommandError, isAlive, run, sleep } from './exec.js';
import { TMP_BASE } from './paths.js';
import { endOrphanedRecords } from './owned-records.js';

const SYSTEMD = '/lib/systemd/systemd';
const RECORD = 'bootlet-systemd.json';

export interface NamespacedSystemd {
  /** systemd's PID as this (host) side sees it; PID 1 inside. */
  readonly pid: number;
  /** Its cgroup subtree, as a path from the host's cgroup root, e.g. /bootlet-systemd-1a2b. */
  readonly cgroup: string;
  /** Command prefix that runs a program inside its namespaces. */
  readonly enter: string[];
  /** The end of systemd's own log (its stdout/stderr), for a test that failed. */
  log(): string;
  stop(): Promise<void>;
}

interface Record_ {
  ownerPid: number;
  pid: number;
  cgroup: string;
  dir: string;
}

/** Why this machine cannot run it, or undefined when it can. */
export function systemdNodeUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (namespaces, cgroups)';
  if (!fs.existsSync(SYSTEMD)) return `no systemd at ${SYSTEMD}`;
  for (const tool of ['unshare', 'nsenter', 'systemctl']) {
    if (spawnSync('which', [tool]).status !== 0) return `no ${tool}`;
  }
  try {
    fs.accessSync('/sys/fs/cgroup', fs.constants.W_OK);
  } catch {
    return '/sys/fs/cgroup is not writable';
  }
  if (!fs.existsSync('/proc/self/ns/cgroup')) return 'the kernel has no cgroup namespaces';
  return undefined;
}

/** The host's cgroup mounts under /sys/fs/cgroup: mount point and the options that name its hierarchy. */
function cgroupMounts(): { mountpoint: string; fstype: 'cgroup' | 'cgroup2'; opts: string }[] {
  const out: { mountpoint: string; fstype: 'cgroup' | 'cgroup2'; opts: string }[] = [];
  for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const mountpoint = line.slice(0, sep).split(' ')[4] ?? '';
    const [fstype, , superOpts = ''] = line.slice(sep + 3).split(' ');
    if ((fstype !== 'cgroup' && fstype !== 'cgroup2') || !mountpoint.startsWith('/sys/fs/cgroup')) continue;
    const opts = superOpts
      .split(',')
      .filter(
        (o) =>
          o !== 'rw' &&
          o !== 'ro' &&
          !o.startsWith('clone_children') &&
          o !== 'nsdelegate' &&
          o !== 'memory_recursiveprot',
      );
    out.push({
      mountpoint,
      fstype,
      opts: (fstype === 'cgroup' && opts.every((o) => o.startsWith('name=')) ? ['none', ...opts] : opts).join(','),
    });
  }
  return out;
}

function innerScript(mounts: ReturnType<typeof cgroupMounts>, unitsDir: string, emptyDir: string): string {
  const unified = mounts.length === 1 && mounts[0]!.fstype === 'cgroup2' && mounts[0]!.mountpoint === '/sys/fs/cgroup';
  const lines = ['#!/bin/sh', 'set -e', 'mount --make-rprivate /'];
  if (unified) {
    lines.push('mount -t cgroup2 cgroup2 /sys/fs/cgroup');
  } else {
    lines.push('mount -t tmpfs -o mode=755 cgroup_root /sys/fs/cgroup');
    for (const m of mounts) {
      lines.push(`mkdir -p ${m.mountpoint}`);
      lines.push(
        m.fstype === 'cgroup2'
          ? `mount -t cgroup2 cgroup2 ${m.mountpoint}`
          : `mount -t cgroup -o ${m.opts} cgroup ${m.mountpoint}`,
      );
    }
  }
  lines.push(
    'mount -t tmpfs tmpfs /run',
    `mount --bind ${unitsDir} /lib/systemd/system`,
    `mount --bind ${emptyDir} /etc/systemd/system`,
    'export container=bootlet-test',
    `exec ${SYSTEMD} --system --unit=bootlet-test.target --log-target=console`,
  );
  return lines.join('\n') + '\n';
}

function hierarchyRoots(): string[] {
  const mounts = cgroupMounts();
  return mounts.map((m) => m.mountpoint);
}

function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Removes a cgroup subtree bottom-up (cgroup directories go with rmdir only). */
function removeSubtree(dir: string): boolean {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return true;
  }
  let ok = true;
  for (const e of entries) if (e.isDirectory()) ok = removeSubtree(path.join(dir, e.name)) && ok;
  try {
    fs.rmdirSync(dir);
  } catch {
    ok = false;
  }
  return ok;
}

async function teardown(r: Record_): Promise<void> {
  // SIGKILL to a PID namespace's init ends every process in the namespace.
  if (isAlive(r.pid)) process.kill(r.pid, 'SIGKILL');
  const deadline = Date.now() + 15_000;
  while (isAlive(r.pid) && Date.now() < deadline) await sleep(50);
  const roots = hierarchyRoots();
  for (;;) {
    if (roots.map((root) => removeSubtree(path.join(root, r.cgroup))).every(Boolean) || Date.now() > deadline) break;
    await sleep(100);
  }
  fs.rmSync(r.dir, { recursive: true, force: true });
}

/** Ends namespaced systemds whose test process is gone (a crashed run). */
export async function cleanupStaleSystemds(): Promise<void> {
  await endOrphanedRecords('systemd-', RECORD, teardown);
}

export async function startNamespacedSystemd(name = 'test'): Promise<NamespacedSystemd> {
  await cleanupStaleSystemds();
  const id = randomBytes(4).toString('hex');
  const dir = path.join(TMP_BASE, `systemd-${name}-${id}`);
  const unitsDir = path.join(dir, 'units');
  const emptyDir = path.join(dir, 'empty');
  fs.mkdirSync(unitsDir, { recursive: true });
  fs.mkdirSync(emptyDir);
  fs.writeFileSync(path.join(unitsDir, 'bootlet-test.target'), '[Unit]\nDescription=bootlet systemd-driver test\n');
  const mounts = cgroupMounts();
  fs.writeFileSync(path.join(dir, 'inner.sh'), innerScript(mounts, unitsDir, emptyDir), { mode: 0o755 });

  // Its own subtree in every hierarchy; a v1 cpuset needs cpus and mems before it takes a task.
  const cgroup = `/bootlet-systemd-${id}`;
  for (const root of hierarchyRoots()) {
    const d = path.join(root, cgroup);
    fs.mkdirSync(d);
    for (const f of ['cpuset.cpus', 'cpuset.mems']) {
      if (fs.existsSync(path.join(d, f))) fs.writeFileSync(path.join(d, f), fs.readFileSync(path.join(root, f)));
    }
  }
  const join = hierarchyRoots()
    .map((root) => `echo $$ > ${path.join(root, cgroup, 'cgroup.procs')}`)
    .join('; ');
  const logFd = fs.openSync(path.join(dir, 'systemd.log'), 'a');
  const outer = spawn(
    'sh',
    ['-c', `${join}; exec unshare --fork --pid --mount --cgroup --mount-proc ${path.join(dir, 'inner.sh')}`],
    {
      detached: true,
      stdio: ['ignore', logFd, logFd],
    },
  );
  fs.closeSync(logFd);
  outer.unref();
  const unsharePid = outer.pid!;
  const record: Record_ = { ownerPid: process.pid, pid: 0, cgroup, dir };

  const deadline = Date.now() + 60_000;
  let pid = 0;
  while (Date.now() < deadline) {
    pid = childrenOf(unsharePid)[0] ?? 0;
    if (pid && fs.existsSync(`/proc/${pid}/root/run/systemd/private`)) break;
    if (!isAlive(unsharePid)) break;
    await sleep(50);
  }
  record.pid = pid;
  fs.writeFileSync(path.join(dir, RECORD), JSON.stringify(record));
  const enter = ['nsenter', '-t', String(pid), '--mount', '--pid', '--cgroup', '--'];
  if (!pid || !isAlive(pid)) {
    await teardown(record);
    throw new Error(`systemd did not start; log:\n${safeRead(path.join(dir, 'systemd.log'))}`);
  }
  // Ready when its start-up job is done.
  for (;;) {
    const state = await run(enter[0]!, [...enter.slice(1), 'systemctl', 'is-system-running'], {
      timeoutMs: 10_000,
    }).catch((e: unknown) => (e instanceof CommandError ? e.stdout : ''));
    if (/running|degraded/.test(state)) break;
    if (Date.now() > deadline) {
      await teardown(record);
      throw new Error(`systemd did not finish starting (state ${state.trim()})`);
    }
    await sleep(100);
  }
  return { pid, cgroup, enter, log: () => safeRead(path.join(dir, 'systemd.log')), stop: () => teardown(record) };
}

function safeRead(p: string): string {
  try {
    return fs.readFileSync(p, 'utf8').slice(-4000);
  } catch {
    return '';
  }
}
